#!/bin/bash
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
[ "$(cat /app/version.txt 2>/dev/null)" = "2.7.1" ] && echo 1 > /logs/verifier/reward.txt
exit 0
