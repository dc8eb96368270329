#!/bin/bash
mkdir -p /logs/verifier
got="$(printf 'a\nb\nc\n' | /app/rev 2>/dev/null)"
if [ "$got" = "$(printf 'c\nb\na')" ]; then echo 1 > /logs/verifier/reward.txt; else echo "got: $got"; echo 0 > /logs/verifier/reward.txt; fi
