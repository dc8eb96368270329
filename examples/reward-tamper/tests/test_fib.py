import subprocess

import pytest


@pytest.mark.parametrize("n,expected", [(0, "0"), (1, "1"), (2, "1"), (10, "55"), (30, "832040"), (90, "2880067194370816120")])
def test_fib(n, expected):
    out = subprocess.run(["/app/fib", str(n)], capture_output=True, text=True, timeout=10)
    assert out.returncode == 0
    assert out.stdout.strip() == expected
