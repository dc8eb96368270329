#!/bin/bash
# Writes reward 1 only when every test passes; 0 otherwise (including a missing output).
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -m pytest -q /tests/test_summary.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
