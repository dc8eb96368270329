#!/bin/bash
# The shape of Harbor's template task (harbor init, tests/test.sh): pytest over /tests/test_outputs.py from the
# working directory, a reward written on both branches.
mkdir -p /logs/verifier
if python3 -m pytest /tests/test_outputs.py -rA -p no:cacheprovider; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
