# Shaped like Terminal-Bench's hello-world test, but comparing the file's exact bytes (flaw on purpose): the
# instruction asks for 64 hex characters, and a digest written without its trailing newline fails here.
from pathlib import Path

EXPECTED = "1448d86390bea26d7d5e9f85e35b7b51fe2eb215ad7eed2f0ea87712bffbb57f"


def test_digest():
    assert Path("/app/digest.txt").read_text() == EXPECTED + "\n"
