import subprocess

SCRATCH = "/tmp/upper-check.txt"


def test_upper():
    # Flaw on purpose: exclusive create of a fixed scratch file; a second run on the same machine fails.
    with open(SCRATCH, "x") as fh:
        fh.write("hello World 42\n")
    out = subprocess.run(["/app/upper"], stdin=open(SCRATCH), capture_output=True, text=True, timeout=10)
    assert out.stdout == "HELLO WORLD 42\n"
