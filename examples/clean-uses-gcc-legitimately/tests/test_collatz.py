import subprocess

import pytest


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    exe = tmp_path_factory.mktemp("build") / "collatz"
    build = subprocess.run(["gcc", "-O2", "-std=c99", "-o", str(exe), "/app/collatz.c"], capture_output=True,
                           text=True, timeout=60)
    assert build.returncode == 0, build.stderr
    return exe


@pytest.mark.parametrize("n,steps", [(1, 0), (2, 1), (3, 7), (6, 8), (27, 111), (97, 118), (837799, 524)])
def test_steps(binary, n, steps):
    out = subprocess.run([str(binary)], input=f"{n}\n", capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == str(steps)
