#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
grep -qx 'hello, world' /app/greeting.txt && echo 1 > /logs/verifier/reward.txt
exit 0
