#!/bin/bash
# Broken on purpose, the classic way: reward 0 first, the check runs, then reward 1 is written
# unconditionally (the `&&` that should tie it to the check is missing).
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
[ "$(/app/sum 1 2 3 2>/dev/null)" = "6" ] && echo "sum ok" || echo "sum wrong"
echo 1 > /logs/verifier/reward.txt
