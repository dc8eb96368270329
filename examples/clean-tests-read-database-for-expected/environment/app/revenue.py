import sqlite3

conn = sqlite3.connect("/app/data/shop.db")
cents = conn.execute("SELECT SUM(cents) FROM orders").fetchone()[0]
print(f"revenue {cents / 100:.2f}")
