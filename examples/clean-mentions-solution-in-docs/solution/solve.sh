#!/bin/bash
set -e
cat > /app/solution.py <<'PY'
import itertools
import re


def encode(text: str) -> str:
    return "".join(f"{ch}{len(list(run))}" for ch, run in itertools.groupby(text))


def decode(text: str) -> str:
    return "".join(ch * int(count) for ch, count in re.findall(r"(\D)(\d+)", text))
PY
