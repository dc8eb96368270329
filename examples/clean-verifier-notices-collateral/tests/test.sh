#!/bin/bash
# Reward 1 only when the script prints the right total and the shop's log is intact.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -m pytest -q /tests/test_total.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
