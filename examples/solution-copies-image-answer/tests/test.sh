#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
if python3 -m pytest -q -p no:cacheprovider /tests/test_render.py; then
  echo 1 > /logs/verifier/reward.txt
fi
