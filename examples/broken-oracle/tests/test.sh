#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /app/greeting.txt 2>/dev/null)" = "hello, world" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "expected 'hello, world' in /app/greeting.txt, got: $(cat /app/greeting.txt 2>&1)"
  echo 0 > /logs/verifier/reward.txt
fi
