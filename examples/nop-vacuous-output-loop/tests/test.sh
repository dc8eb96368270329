#!/bin/bash
# Harbor's template shape: pytest -rA decides the reward.
mkdir -p /logs/verifier
if python3 -m pytest -rA -p no:cacheprovider /tests/test_outputs.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
