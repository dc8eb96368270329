# The look-alike of variation-json-text: the report is parsed, so any key order (and any whitespace) passes.
import json
from pathlib import Path


def test_summary():
    summary = json.loads(Path("/app/summary.json").read_text())
    assert summary == {"count": 5, "min": 3, "max": 12, "total": 35}
    assert all(type(v) is int for v in summary.values())
