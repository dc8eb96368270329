import hashlib
from pathlib import Path


def test_manifest():
    files = sorted(p for p in Path("/app/data").iterdir() if p.is_file())
    want = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p}" for p in files]
    assert Path("/app/checksums.txt").read_text().splitlines() == want
