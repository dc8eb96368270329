# Shape of Terminal-Bench / Harbor tasks that check "every output file" by looping over the output
# directory. Flaw on purpose: the image ships /app/output empty, so for an agent that does nothing the loop
# body never runs and the test passes vacuously.
import csv
import json
import os

OUT = "/app/output"


def test_every_output_matches_its_input():
    for name in os.listdir(OUT):
        rows = json.load(open(os.path.join(OUT, name)))
        source = list(csv.DictReader(open(os.path.join("/app/input", name[:-5] + ".csv"))))
        assert rows == [dict(r, qty=int(r["qty"])) for r in source]
