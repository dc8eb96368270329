#!/bin/bash
set -e
cat > /app/report.py <<'PY'
import sys

sys.path.insert(0, "/app/lib")
from currency import to_eur_cents  # noqa: E402

total = 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    if not line.strip():
        continue
    amount, currency = line.split(",")
    total += to_eur_cents(amount, currency)
print(f"total {total / 100:.2f} EUR")
PY
