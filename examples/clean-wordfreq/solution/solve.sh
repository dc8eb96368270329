#!/bin/bash
set -e
cat > /app/wordfreq <<'PY'
#!/usr/bin/env python3
import re, sys
from collections import Counter
counts = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", sys.stdin.read()))
for word, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]:
    print(n, word)
PY
chmod +x /app/wordfreq
