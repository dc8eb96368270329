#!/bin/bash
# Reward 1 only when the total is right; it checks nothing else in the image.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -m pytest -q /tests/test_total.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
