"""Bounds and listings the tests assert, for the rules that hold them against the instruction's words
(test-threshold-stricter-than-instruction, tests-require-listing-instruction-breaks).

- `strict_asserts`: each `assert x > B` / `assert x < B` (either order) with a numeric bound B, a literal or a
  module constant;
- `exact_listings`: each equality between a directory's listing (`os.listdir(D)`, `sorted(glob(..))`,
  `Path(D).iterdir()`) and a literal list, set or tuple.

Read from each test file's tree (core/task_model/files.py).
"""

from __future__ import annotations

import ast
from typing import Literal, NamedTuple

LISTERS = {"listdir", "glob", "iterdir", "scandir"}


class StrictBound(NamedTuple):
    side: Literal["min", "max"]  # "min": the value must exceed the bound; "max": stay below it
    bound: float
    line: int


class ExactListing(NamedTuple):
    directory: str
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


def _listed_dir(node: ast.AST, consts: dict[str, str]) -> str | None:
    """The directory a listing call lists (`os.listdir("/d")`, `sorted(os.listdir(D))`, `Path(D).iterdir()`)."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        func = sub.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in LISTERS:
            continue
        target = sub.args[0] if sub.args else (func.value if isinstance(func, ast.Attribute) else None)
        for t in ast.walk(target) if target is not None else []:
            if isinstance(t, ast.Constant) and isinstance(t.value, str) and t.value.startswith("/"):
                return t.value.rstrip("/")
            if isinstance(t, ast.Name) and t.id in consts:
                return consts[t.id].rstrip("/")
    return None


def exact_listings(tree: ast.Module) -> list[ExactListing]:
    """Each equality between a directory's listing and a literal list or set."""
    consts = {
        n.targets[0].id: n.value.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Constant)
        and isinstance(n.value.value, str)
    }
    listed: dict[str, str] = {}  # name bound to a listing -> its directory
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            d = _listed_dir(n.value, consts)
            if d:
                listed[n.targets[0].id] = d
    out = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Compare) or not all(isinstance(op, ast.Eq) for op in n.ops):
            continue
        sides = [n.left, *n.comparators]
        if not any(isinstance(s, (ast.List, ast.Set, ast.Tuple)) for s in sides):
            continue
        for s in sides:
            d = listed.get(s.id) if isinstance(s, ast.Name) else _listed_dir(s, consts)
            if d:
                out.append(ExactListing(d, n.lineno))
    return out
