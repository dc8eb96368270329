#!/bin/bash
set -e
cat > /app/slug.py <<'PY'
import re


def slugify(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
PY
