# The look-alike of nop-vacuous-output-loop: a loop over a directory listing too, but over the inputs (which the
# image ships), so every expected output is opened and checked, and an empty output directory fails.
import csv
import json
import os

OUT = "/app/output"


def test_every_output_matches_its_input():
    inputs = sorted(name for name in os.listdir("/app/input") if name.endswith(".csv"))
    assert inputs
    for name in inputs:
        rows = json.load(open(os.path.join(OUT, name[:-4] + ".json")))
        source = list(csv.DictReader(open(os.path.join("/app/input", name))))
        assert rows == [dict(r, qty=int(r["qty"])) for r in source]
