#!/bin/bash
cat > /app/inventory.py <<'EOF'
import csv
import json
import sys

with open("/app/stock.csv") as f:
    rows = list(csv.DictReader(f))
if "--totals" in sys.argv:
    print(json.dumps({"item_count": len(rows), "total_qty": sum(int(r["qty"]) for r in rows)}))
else:
    for r in rows:
        print(r["item"], r["qty"])
EOF
