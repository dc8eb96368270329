"""Thresholds over a counted collection in the tests (issue 35, item 2): the static half of "tolerance by design".

A verifier that scores a collection record by record and passes above a threshold ("more than 6 of 10 rows
recovered") tolerates a partial answer: `sum(1 for r in rows if ok(r)) > 6`, `len([...]) >= 7`, a counter
incremented in a loop, or a ratio of one (`correct / total >= 0.6`). probes/mutation/tolerance.py tells such a
verifier apart from a weak one; this facet of the test model (core/task_model/tests_reader.py) finds the
comparisons.
"""

from __future__ import annotations

import ast
import math

COUNTERS = ("sum", "len")


def _counted(node: ast.AST, counters: set[str]) -> bool:
    """A count over a collection: sum(...)/len(...) over a comprehension or generator, a name bound to one
    (or incremented in a loop), or a ratio whose numerator is one."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
        return _counted(node.left, counters)
    if isinstance(node, ast.Name):
        return node.id in counters
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in COUNTERS and node.args:
        arg = node.args[0]
        return (
            isinstance(arg, (ast.GeneratorExp, ast.ListComp, ast.SetComp))
            or _overlap(arg)
            or (isinstance(arg, ast.Name) and arg.id in counters)
        )
    return False


def _overlap(node: ast.AST) -> bool:
    """The overlap of two collections, counted by len(): `set(want) & set(got)`, `a.intersection(b)` (issue 42:
    a set-intersection score is a threshold over records, tolerance by design)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "intersection"


def _positive(node: ast.AST, consts: dict[str, float]) -> float | None:
    """The threshold's value when it is a positive number (a literal or a module constant), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value) if node.value > 0 else None
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id] if consts[node.id] > 0 else None
    if isinstance(node, ast.BinOp):  # len(expected) * 0.6, 0.7 * TOTAL: a share of the collection, not a small
        return math.inf if _positive(node.left, consts) or _positive(node.right, consts) else None  # constant
    return None


def _names(tree: ast.AST) -> tuple[set[str], dict[str, float]]:
    """Names bound to a count (`score = sum(...)`, `hits += 1` in a loop) and numeric module constants."""
    counters: set[str] = set()
    consts: dict[str, float] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if (
                isinstance(value, ast.Constant)
                and isinstance(value.value, (int, float))
                and not isinstance(value.value, bool)
            ):
                consts[node.targets[0].id] = float(value.value)
            elif _counted(value, counters):
                counters.add(node.targets[0].id)
        elif isinstance(node, (ast.For, ast.While)):
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.AugAssign)
                    and isinstance(inner.op, ast.Add)
                    and isinstance(inner.target, ast.Name)
                ):
                    counters.add(inner.target.id)
    return counters, consts


def thresholds_in(source: str, name: str = "test") -> list[str]:
    """Each comparison in Python test source that passes a counted collection above a positive threshold,
    as "name:line: code". `len(rows) > 0` (non-empty) and exact counts (`==`) are not thresholds."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return tree_thresholds(tree, name)


def tree_thresholds(tree: ast.Module, name: str = "test") -> list[str]:
    """`thresholds_in` over a module already parsed (the test model's tree)."""
    counters, consts = _names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        op, left, right = node.ops[0], node.left, node.comparators[0]
        if isinstance(op, (ast.Lt, ast.LtE)):
            left, right = right, left  # 6 < score reads as score > 6
        elif not isinstance(op, (ast.Gt, ast.GtE)):
            continue
        value = _positive(right, consts)
        if value is None or not _counted(left, counters):
            continue
        if isinstance(op, (ast.GtE, ast.LtE)) and value <= 1 and not isinstance(left, ast.BinOp):
            continue  # `count >= 1`: at least one, a non-empty check, not a tolerance
        found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found
