#!/bin/bash
set -e
python3 - <<'PY'
primes = []
n = 2
while len(primes) < 300:
    if all(n % p for p in primes if p * p <= n):
        primes.append(n)
    n += 1
with open("/app/primes.txt", "w") as fh:
    fh.write("".join(f"{p}\n" for p in primes))
PY
