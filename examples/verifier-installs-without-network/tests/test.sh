#!/bin/bash
# The task has no network, yet the verifier installs a plugin from the package index at verify time: the
# install can never succeed, so what the tests run depends on whatever the image happens to have.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
python3 -m pip install -q --retries 0 --timeout 2 --break-system-packages pytest-timeout==2.3.1
python3 -m pytest -q /tests/test_sorted.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
