#!/bin/bash
set -e
python3 - <<'PY'
rows = {}
for line in open("/app/damaged.tsv"):
    parts = line.strip().split("\t")
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        rows[int(parts[1])] = int(parts[0])
with open("/app/recovered.csv", "w") as out:
    for key in sorted(rows):
        out.write(f"{key},{rows[key]}\n")
PY
