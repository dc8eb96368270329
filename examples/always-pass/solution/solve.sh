#!/bin/bash
cat > /app/sum <<'PY'
#!/usr/bin/env python3
import sys
print(sum(int(a) for a in sys.argv[1:]))
PY
chmod +x /app/sum
