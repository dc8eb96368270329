import sqlite3
import subprocess

DB = "/app/data/shop.db"
SEEDED_ORDERS = 6


def test_revenue_counts_paid_orders_only():
    out = subprocess.run(["python3", "/app/revenue.py"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "revenue 46.90"


def test_orders_left_alone():
    conn = sqlite3.connect(DB)
    rows = conn.execute("SELECT id, status FROM orders ORDER BY id").fetchall()
    assert len(rows) == SEEDED_ORDERS
    assert [status for _id, status in rows].count("refunded") == 2
