"""Wall-clock timing in the tests: names bound to clock readings or their differences, and each comparison of
such a duration with a fixed number (`assert time.time() - start < 2.0`). A facet of the test model
(core/task_model/tests_reader.py); probes/static/task_rules.py makes `verifier-timing-dependent` of it.
"""

from __future__ import annotations

import ast

CLOCKS = {
    "time",
    "perf_counter",
    "monotonic",
    "time_ns",
    "perf_counter_ns",
    "monotonic_ns",
    "now",
    "utcnow",
    "process_time",
    "default_timer",
}


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return name in CLOCKS


class _Timing(ast.NodeVisitor):
    """Names bound to clock readings or their differences; comparisons of a duration with a constant."""

    def __init__(self) -> None:
        self.clocks: set[str] = set()
        self.durations: set[str] = set()
        self.hits: list[int] = []

    def _involves_clock(self, node: ast.AST) -> bool:
        return any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in self.clocks) for n in ast.walk(node))

    def _is_duration(self, node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and self._involves_clock(n):
                return True
            if isinstance(n, ast.Name) and n.id in self.durations:
                return True
        return False

    def visit_Assign(self, node: ast.Assign) -> None:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if self._is_duration(node.value):
            self.durations.update(names)
        elif _is_clock_call(node.value):
            self.clocks.update(names)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        ordered = all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in node.ops)
        constant = any(isinstance(s, ast.Constant) and isinstance(s.value, (int, float)) for s in sides)
        if ordered and constant and any(self._is_duration(s) for s in sides):
            self.hits.append(node.lineno)
        self.generic_visit(node)


def timed_comparisons(tree: ast.Module) -> list[int]:
    """The lines where a measured duration is compared with a constant."""
    visitor = _Timing()
    visitor.visit(tree)
    return visitor.hits
