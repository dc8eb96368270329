import subprocess

import pytest

CASES = [
    ("the cat and the hat and THE bat", "3 the\n2 and\n1 bat\n"),
    ("b a b a c", "2 a\n2 b\n1 c\n"),
    ("x-ray x ray", "2 ray\n2 x\n"),
    ("", ""),
    ("Hello, hello... HELLO! world", "3 hello\n1 world\n"),
    ("don't stop", "1 don\n1 stop\n1 t\n"),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_wordfreq(text, expected):
    out = subprocess.run(["/app/wordfreq"], input=text, capture_output=True, text=True, timeout=10)
    assert out.returncode == 0
    assert out.stdout == expected
