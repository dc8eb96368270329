#!/bin/bash
python3 - <<'EOF'
moves, cur = [], ""
for line in open("/app/keys.log"):
    k = line.strip().split("=", 1)[1]
    if k == "Return":
        moves.append(cur)
        cur = ""
    else:
        cur += " " if k == "space" else k
open("/app/moves.txt", "w").write("\n".join(moves) + "\n")
EOF
