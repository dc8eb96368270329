# The look-alike of variation-exact-newline (as Terminal-Bench's hello-world test does): surrounding
# whitespace is stripped, so a digest with or without its trailing newline passes; the characters are exact.
from pathlib import Path

EXPECTED = "1448d86390bea26d7d5e9f85e35b7b51fe2eb215ad7eed2f0ea87712bffbb57f"


def test_digest():
    assert Path("/app/digest.txt").read_text().strip() == EXPECTED
