#!/bin/bash
set -e
# Wrong on purpose: the words are not lower-cased ("The" and "the" are counted apart).
python3 - <<'PY'
import collections, json
counts = collections.Counter(open("/app/words.txt").read().split())
with open("/app/counts.json", "w") as fh:
    json.dump(counts, fh)
PY
