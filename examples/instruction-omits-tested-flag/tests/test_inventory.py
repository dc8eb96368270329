# The helper runs the program with an option and reads two keys of its JSON output.
import csv
import json
import subprocess
from pathlib import Path

CSV = Path("/app/stock.csv")


def summary():
    cmd = ["python3", "/app/inventory.py", "--totals"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)


def expected_totals():
    with CSV.open() as f:
        rows = list(csv.DictReader(f))
    return len(rows), sum(int(r["qty"]) for r in rows)


def test_counts_items():
    count, _ = expected_totals()
    assert summary()["item_count"] == count


def test_sums_quantities():
    _, total = expected_totals()
    assert summary()["total_qty"] == total
