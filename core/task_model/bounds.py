"""Bounds the tests assert, for the rule that holds them against the instruction's words
(test-threshold-stricter-than-instruction). The exact listings of tests-require-listing-instruction-breaks are a
query over the assertion model (probes/static/instruction_test_bounds.py).

- `strict_asserts`: each `assert x > B` / `assert x < B` (either order) with a numeric bound B, a literal or a
  module constant.

Read from each test file's tree (core/task_model/files.py).
"""

from __future__ import annotations

import ast
from typing import Literal, NamedTuple


class StrictBound(NamedTuple):
    side: Literal["min", "max"]  # "min": the value must exceed the bound; "max": stay below it
    bound: float
    line: int


def _constants(tree: ast.Module) -> dict[str, float]:
    out: dict[str, float] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
                out[node.targets[0].id] = float(v.value)
    return out


def _number(node: ast.AST, consts: dict[str, float]) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    return consts.get(node.id) if isinstance(node, ast.Name) else None


def strict_asserts(tree: ast.Module) -> list[StrictBound]:
    """Each `assert x > B` / `assert x < B` (either order) of a test, as the side it bounds."""
    consts = _constants(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert) or not isinstance(node.test, ast.Compare) or len(node.test.ops) != 1:
            continue
        left, op, right = node.test.left, node.test.ops[0], node.test.comparators[0]
        for bound, flip in ((_number(right, consts), False), (_number(left, consts), True)):
            if bound is None or (_number(left, consts) is not None and _number(right, consts) is not None):
                continue
            if isinstance(op, ast.Gt):
                out.append(StrictBound("max" if flip else "min", bound, node.lineno))
            elif isinstance(op, ast.Lt):
                out.append(StrictBound("min" if flip else "max", bound, node.lineno))
    return out
