# The checks run the program on inputs and compare with a count the test computes itself.
import subprocess
from pathlib import Path

import pytest

PROGRAM = Path("/app/wordcount.py")
TEXTS = ["a b a", "The the THE cat", "one\ntwo  three\tone", ""]


def run_on(text):
    done = subprocess.run(["python3", str(PROGRAM)], input=text, capture_output=True, text=True, check=True)
    return done.stdout


def require_count(text, expected):
    assert run_on(text).strip() == str(expected), text


@pytest.mark.parametrize("text", TEXTS)
def test_counts_distinct_words(text):
    require_count(text, len({w.lower() for w in text.split()}))
