"""scripts/complexity.py counts decision points the way issue 32 defines them, and the tree stays at or under 25."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast
ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("complexity", ROOT / "scripts" / "complexity.py")
assert _spec is not None and _spec.loader is not None
complexity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(complexity)

SAMPLE = """
def f(xs, y):
    if y and xs or not y:          # if: 1, and/or: 2
        pass
    elif y:                        # elif: 1
        pass
    for x in xs:                   # loop: 1
        while x:                   # loop: 1
            x -= 1
    try:
        pass
    except ValueError:             # except: 1
        pass
    match y:
        case 1: pass               # case: 1
        case _: pass               # case: 1
    z = 1 if y else 2              # conditional expression: 1
    w = [x for x in xs if x if y]  # comprehension ifs: 2
    def inner():                   # a nested function counts toward its holder
        if y: return 1             # if: 1
"""


def test_each_kind_of_decision_point_counts_once():
    (func,) = [n for n in ast.parse(SAMPLE).body if isinstance(n, ast.FunctionDef)]
    assert complexity.decisions(func) == 13


def test_a_function_over_the_limit_fails_the_check(tmp_path):
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(26))
    (tmp_path / "big.py").write_text(f"def big(x):\n{body}")
    assert complexity.main([str(tmp_path / "big.py")]) == 1
    (tmp_path / "big.py").write_text(f"def big(x):\n{body.split('    if x == 25')[0]}")
    assert complexity.main([str(tmp_path / "big.py")]) == 0
