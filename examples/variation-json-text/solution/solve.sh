#!/bin/bash
set -e
python3 - <<'PY'
import json

values = [int(x) for x in open("/app/numbers.txt").read().split()]
summary = {"count": len(values), "min": min(values), "max": max(values), "total": sum(values)}
with open("/app/summary.json", "w") as fh:
    json.dump(summary, fh)
PY
