import subprocess


def test_hello():
    out = subprocess.run(["/app/hello"], capture_output=True, text=True, check=True).stdout
    assert out == "hello\n"
