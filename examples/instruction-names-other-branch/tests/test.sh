#!/bin/bash
# Harbor's template shape: checks in the working directory, a reward written on both branches.
mkdir -p /logs/verifier
cd /app/repo || { echo 0 > /logs/verifier/reward.txt; exit 0; }
if git rev-parse --verify -q main >/dev/null \
   && [ "$(git show main:VERSION)" = "1.4.2" ] \
   && [ "$(git log --format=%s -1 main)" = "bump version to 1.4.2" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
