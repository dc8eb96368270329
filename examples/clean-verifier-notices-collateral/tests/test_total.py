import csv
import subprocess
from pathlib import Path


def expected_total() -> str:
    with open("/app/orders.csv", newline="") as f:
        total = sum(float(row["amount"]) for row in csv.DictReader(f))
    return f"total {total:.2f} EUR\n"


def test_total_line():
    out = subprocess.run(["/app/total"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout == expected_total()


def test_shop_log_untouched():
    assert Path("/var/log/shop.log").read_text() == "2026-11-01 shop initialised\n"
