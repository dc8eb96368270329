# Shape of Terminal-Bench 2's polyglot-c-py: the tests build the agent's program next to its source
# (`gcc ... -o /app/polyglot/cmain`) and also require that directory to hold the source file alone. Flaw on
# purpose: the first run passes and leaves `cmain` behind, so every later run on the same files fails.
import os
import subprocess

SRC_DIR = "/app/fib"


def test_only_the_source_file():
    assert os.listdir(SRC_DIR) == ["main.c"]


def test_fibonacci():
    exe = os.path.join(SRC_DIR, "cmain")
    subprocess.run(["gcc", os.path.join(SRC_DIR, "main.c"), "-o", exe], check=True, timeout=60)
    for n, want in [(0, 0), (1, 1), (10, 55), (50, 12586269025)]:
        out = subprocess.run([exe, str(n)], capture_output=True, text=True, timeout=10, check=True)
        assert out.stdout.strip() == str(want)
