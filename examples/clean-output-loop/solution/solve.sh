#!/bin/bash
set -e
python3 - <<'PY'
import csv, json, os
for name in os.listdir("/app/input"):
    if name.endswith(".csv"):
        rows = [dict(r, qty=int(r["qty"])) for r in csv.DictReader(open(os.path.join("/app/input", name)))]
        json.dump(rows, open(os.path.join("/app/output", name[:-4] + ".json"), "w"))
PY
