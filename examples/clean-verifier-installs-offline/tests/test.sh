#!/bin/bash
# The task has no network, and its verifier installs only from what the image vendors, in three spellings:
# --no-index with a local --find-links, an index that is a file:// directory, and the image's PIP_NO_INDEX.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
# The image has pytest already, so the installs run only where it is missing (pip costs seconds per call).
if ! python3 -c 'import pytest' 2>/dev/null; then
    python3 -m pip install -q --no-index --find-links /opt/wheels pytest
    python3 -m pip install -q --index-url file:///opt/wheels/simple pytest
    pip install -q pytest
fi
python3 -m pytest -q /tests/test_sorted.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt
exit 0
