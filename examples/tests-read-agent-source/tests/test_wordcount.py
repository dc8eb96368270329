# The checks read the program's source as text (the flaw on purpose): a comment naming Counter passes.
from pathlib import Path

import pytest

PROGRAM = Path("/app/wordcount.py")


@pytest.fixture
def source():
    return PROGRAM.read_text()


def require_text(src, needle):
    assert needle in src, f"the program does not use {needle}"


def test_counts_with_counter(source):
    require_text(source, "Counter(")


def test_has_entry_point(source):
    require_text(source, "def main")
