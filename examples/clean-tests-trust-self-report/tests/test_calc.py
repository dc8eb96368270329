# The program's verdict is read too, but each case recomputes the value the program must print.
import subprocess

import pytest

EXPRESSIONS = ["2+3*4", "(1+2)*3", "10-4-3", "7*6-2*5"]


def run_calc(*args):
    return subprocess.run(["python3", "/app/calc.py", *args], capture_output=True, text=True).stdout


def assert_passed(out):
    assert "PASSED" in out, out


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_evaluates_with_precedence(expr):
    assert_passed(run_calc("--self-test"))
    assert run_calc(expr).strip() == str(eval(expr))
