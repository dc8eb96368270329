import csv
from pathlib import Path


def expected_total() -> str:
    with open("/app/orders.csv", newline="") as f:
        total = sum(float(row["amount"]) for row in csv.DictReader(f))
    return f"total {total:.2f} EUR\n"


def test_total_line():
    assert Path("/app/total.txt").read_text() == expected_total()
