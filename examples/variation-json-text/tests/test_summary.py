# Shaped like the Terminal-Bench tasks that ask for a JSON report, but comparing the file's text (flaw on
# purpose): the instruction never fixes the order of the keys, and the same object with its keys in another
# order fails here.
from pathlib import Path


def test_summary():
    assert Path("/app/summary.json").read_text().strip() == '{"count": 5, "min": 3, "max": 12, "total": 35}'
