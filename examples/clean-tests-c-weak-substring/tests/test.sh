#!/bin/bash
# Builds the C checker and runs it: reward 1 only when it exits 0; 0 otherwise.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
gcc -O2 -o /tmp/check_users /tests/check_users.c && /tmp/check_users && echo 1 > /logs/verifier/reward.txt
exit 0
