#!/bin/bash
cat > /app/count_users.py <<'PY'
import sys

with open(sys.argv[1]) as f:
    users = {line.split()[0] for line in f if line.split()}
print(f"users: {len(users)}")
PY
