# The look-alike of verifier-compiles-into-checked-dir: the same listing and the same build, but the binary
# goes to a temporary directory, so the directory the tests list is never written.
import os
import subprocess
import tempfile

SRC_DIR = "/app/fib"


def test_only_the_source_file():
    assert os.listdir(SRC_DIR) == ["main.c"]


def test_fibonacci():
    with tempfile.TemporaryDirectory() as build:
        exe = os.path.join(build, "cmain")
        subprocess.run(["gcc", os.path.join(SRC_DIR, "main.c"), "-o", exe], check=True, timeout=60)
        for n, want in [(0, 0), (1, 1), (10, 55), (50, 12586269025)]:
            out = subprocess.run([exe, str(n)], capture_output=True, text=True, timeout=10, check=True)
            assert out.stdout.strip() == str(want)
