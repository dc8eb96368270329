# The check wants the whole labelled line, with a count the test computes from the log.
import subprocess

LOG = "/app/server.log"


def run_counter(path):
    return subprocess.run(["python3", "/app/count_errors.py", path], capture_output=True, text=True).stdout


def assert_reports(out, count):
    assert f"errors: {count}" in out.splitlines(), out


def test_counts_the_errors():
    with open(LOG) as f:
        count = sum("ERROR" in line for line in f)
    assert_reports(run_counter(LOG), count)
