# Shaped like Terminal-Bench 2's polyglot-c-py: the instruction's own command compiles to /app/polyglot/cmain,
# yet the test demands that the directory hold main.py.c alone (flaw on purpose: an agent that ran the
# instruction's command to check its work fails here).
import os
import subprocess


def test_fibonacci_polyglot(tmp_path):
    polyglot_files = os.listdir("/app/polyglot")
    assert polyglot_files == ["main.py.c"], f"Expected only main.py.c, found: {polyglot_files}"

    binary = tmp_path / "cmain"
    subprocess.run(["gcc", "/app/polyglot/main.py.c", "-o", str(binary)], check=True, capture_output=True)
    for n, expected in [(42, "267914296"), (10, "55"), (1, "1"), (0, "0")]:
        py = subprocess.run(["python3", "/app/polyglot/main.py.c", str(n)], capture_output=True, text=True, check=True)
        c = subprocess.run([str(binary), str(n)], capture_output=True, text=True, check=True)
        assert py.stdout.strip() == expected and c.stdout.strip() == expected
