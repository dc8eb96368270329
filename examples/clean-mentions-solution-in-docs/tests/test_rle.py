import sys

sys.path.insert(0, "/app")

import pytest

from solution import decode, encode

CASES = [("aaab", "a3b1"), ("", ""), ("abc", "a1b1c1"), ("zzzzzzzzzzzz", "z12"), ("aabbbaa  !", "a2b3a2 2!1")]


@pytest.mark.parametrize("plain,coded", CASES)
def test_encode(plain, coded):
    assert encode(plain) == coded


@pytest.mark.parametrize("plain,coded", CASES)
def test_decode(plain, coded):
    assert decode(coded) == plain
