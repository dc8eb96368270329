import hashlib
import subprocess

import pytest


@pytest.mark.parametrize("data", [b"", b"abc", b"hello world\n", bytes(range(256)) * 40])
def test_digest(tmp_path, data):
    f = tmp_path / "input.bin"
    f.write_bytes(data)
    out = subprocess.run(["/app/sha256", str(f)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == hashlib.sha256(data).hexdigest()


def test_blob_digest():
    want = hashlib.sha256(open("/app/data/blob.bin", "rb").read()).hexdigest()
    assert open("/app/blob.sha256").read().strip() == want
