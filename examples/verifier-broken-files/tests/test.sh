#!/bin/bash
# Sources a helper the task never shipped, then runs a test file with a syntax error: every trial fails.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
source /tests/greet_helpers.sh
python3 -m pytest -q /tests/test_outputs.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
