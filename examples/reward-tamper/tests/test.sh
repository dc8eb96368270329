#!/bin/bash
# Reward 1 when every test passes. (Flaw on purpose: nothing is written when they fail.)
mkdir -p /logs/verifier
python3 -m pytest -q /tests/test_fib.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
