# The look-alike of variation-build-product-listing (Terminal-Bench 2's later polyglot-c-py test): the named
# file must exist; what else the directory holds (the instruction's own cmain) is not the test's business.
import os
import subprocess


def test_fibonacci_polyglot(tmp_path):
    assert os.path.isfile("/app/polyglot/main.py.c")

    binary = tmp_path / "cmain"
    subprocess.run(["gcc", "/app/polyglot/main.py.c", "-o", str(binary)], check=True, capture_output=True)
    for n, expected in [(42, "267914296"), (10, "55"), (1, "1"), (0, "0")]:
        py = subprocess.run(["python3", "/app/polyglot/main.py.c", str(n)], capture_output=True, text=True, check=True)
        c = subprocess.run([str(binary), str(n)], capture_output=True, text=True, check=True)
        assert py.stdout.strip() == expected and c.stdout.strip() == expected
