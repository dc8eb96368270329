import sqlite3
import subprocess

DB = "/app/data/shop.db"


def test_revenue_counts_paid_orders_only():
    conn = sqlite3.connect(DB)
    paid = conn.execute("SELECT SUM(cents) FROM orders WHERE status = 'paid'").fetchone()[0]
    out = subprocess.run(["python3", "/app/revenue.py"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"revenue {paid / 100:.2f}"
