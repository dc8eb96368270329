#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -m pytest -q /tests/test_sorted.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
