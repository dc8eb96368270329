#!/bin/bash
cat > /app/count_errors.py <<'EOF'
import sys

with open(sys.argv[1]) as f:
    print(f"errors: {sum('ERROR' in line for line in f)}")
EOF
