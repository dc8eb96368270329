"""Tolerance by design, told apart from a weak verifier (issue 35, item 2).

A verifier that scores a collection record by record and passes above a threshold ("more than 6 of 10 rows
recovered") accepts a mutant that breaks one record: the task was designed to tolerate partial answers, and
that is a note (`verifier-tolerates-partial-answer`, info), not a shortcut. A weak verifier accepts a *wholly*
wrong answer (emptied, replaced, every record changed): that stays `verifier-accepts-mutant`.

Two ways to see the threshold, either is enough:
- statically, in the tests' AST: a count compared with `>` or `>=` (`sum(1 for r in rows if ok(r)) > 6`,
  `len([...]) >= 7`, a counter incremented in a loop), or a ratio of one (`correct / total >= 0.6`);
- dynamically, per output file: every one-record mutant passes while every whole-file mutant fails. A
  verifier that checks some records and ignores others fails the one-record mutant of a checked record, so
  it is not taken for tolerant.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from pathlib import Path

from envqa.core.defaults import MAX_TEST_BYTES

COUNTERS = ("sum", "len")


@dataclass
class FileVerdicts:
    """What the verifier said about one output file's mutants: (kind, verdict) per scope."""

    path: str
    whole: list[tuple[str, str]] = field(default_factory=list)  # wholly wrong: emptied, replaced, every record
    record: list[tuple[str, str]] = field(default_factory=list)  # one record wrong

    def tolerant(self) -> bool:
        """One-record mutants all pass and whole-file mutants all fail (at least one of each tried)."""
        return (
            bool(self.record)
            and bool(self.whole)
            and all(v == "pass" for _k, v in self.record)
            and all(v == "fail" for _k, v in self.whole)
        )

    def only_partial(self) -> bool:
        """Some one-record mutant passes and every whole-file mutant fails."""
        return (
            any(v == "pass" for _k, v in self.record) and bool(self.whole) and all(v == "fail" for _k, v in self.whole)
        )


def _counted(node: ast.AST, counters: set[str]) -> bool:
    """A count over a collection: sum(...)/len(...) over a comprehension or generator, a name bound to one
    (or incremented in a loop), or a ratio whose numerator is one."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
        return _counted(node.left, counters)
    if isinstance(node, ast.Name):
        return node.id in counters
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in COUNTERS and node.args:
        arg = node.args[0]
        return isinstance(arg, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) or (
            isinstance(arg, ast.Name) and arg.id in counters
        )
    return False


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
    except (SyntaxError, ValueError):
        return []
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


def verifier_thresholds(env) -> list[str]:
    """The thresholds in the verifier's Python files (env.tests), "tests/<file>:line: code"."""
    found: list[str] = []
    for copy in env.tests:
        src = Path(copy.source)
        for path in sorted(src.rglob("*.py")) if src.is_dir() else [src]:
            if not path.is_file() or path.suffix != ".py" or path.stat().st_size > MAX_TEST_BYTES:
                continue
            rel = path.relative_to(src) if src.is_dir() else Path(path.name)
            found += thresholds_in(path.read_text(errors="replace"), f"tests/{rel.as_posix()}")
    return found


def every_record_changed(data: bytes, only: int | None = None) -> bytes:
    """Each non-empty line changed (or only line `only`): its first number + 1, or, without a number, its text
    reversed and marked, so no record stays right."""
    import re

    lines = data.splitlines(keepends=True)
    out = []
    index = -1
    for line in lines:
        body = line.rstrip(b"\r\n")
        if body.strip():
            index += 1
        if not body.strip() or (only is not None and index != only):
            out.append(line)
            continue
        m = re.search(rb"\d+", body)
        changed = (body[: m.start()] + str(int(m.group()) + 1).encode() + body[m.end() :]) if m else body[::-1] + b"#"
        out.append(changed + line[len(body) :])
    return b"".join(out)


def records(data: bytes) -> int:
    return sum(1 for line in data.splitlines() if line.strip())
