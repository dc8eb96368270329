import hashlib
from pathlib import Path


def test_output_exists():
    assert Path("/app/fingerprint.txt").exists()


def test_output_content():
    digest = hashlib.sha256(Path("/app/release.tar").read_bytes()).hexdigest()
    content = Path("/app/fingerprint.txt").read_text().strip()
    assert content == "sha256:" + digest
