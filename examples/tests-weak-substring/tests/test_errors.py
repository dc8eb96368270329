# The check wants a one-digit count anywhere in the output (the flaw on purpose): "line 3: bad input" passes.
import subprocess

LOG = "/app/server.log"


def run_counter(path):
    return subprocess.run(["python3", "/app/count_errors.py", path], capture_output=True, text=True).stdout


def assert_reports(out, count):
    assert count in out, out


def test_counts_the_errors():
    assert_reports(run_counter(LOG), "3")
