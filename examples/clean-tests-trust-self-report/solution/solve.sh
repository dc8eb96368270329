#!/bin/bash
python3 - <<'EOF'
from pathlib import Path
p = Path("/app/calc.py")
src = p.read_text()
start = src.index("def evaluate")
end = src.index("def self_test")
src = src[:start] + 'def evaluate(expr):\n    if not re.fullmatch(r"[\\d+\\-*/() ]+", expr):\n        raise ValueError(expr)\n    return int(eval(expr))\n\n\n' + src[end:]
p.write_text(src)
EOF
