"""Builds the shop's order database at image build time (run as a script, then kept for reference)."""
import sqlite3

ORDERS = [
    (1, "paid", 1250),
    (2, "paid", 830),
    (3, "refunded", 990),
    (4, "paid", 410),
    (5, "refunded", 1500),
    (6, "paid", 2200),
]

conn = sqlite3.connect("/app/data/shop.db")
conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL, cents INTEGER NOT NULL)")
conn.executemany("INSERT INTO orders VALUES (?, ?, ?)", ORDERS)
conn.commit()
conn.close()
