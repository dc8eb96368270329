"""Where the tests ask for more than the instruction allows, read from both sides (issue 42, item 2; shapes of the
TB2 dev split's 2.0 tasks that 2.1 fixed). Every finding cites the instruction's line and the test's.

  test-threshold-stricter-than-instruction  (brittleness, warning) the instruction says "at least 0.62" and the
      test asserts `accuracy > 0.62` (or "at most N" against `< N`): work exactly at the stated bound fails.
  tests-require-listing-instruction-breaks  (brittleness, warning) a test compares a directory's exact listing
      (`os.listdir(D) == ["main.rs"]`) while a command the instruction gives writes another file into D
      (`g++ ... -o D/cmain`): following the instruction fails the test.

Look-alikes kept quiet: the same number with an inclusive comparison, a strict bound the instruction words as
strict ("more than"), a listing of a directory the instruction's commands never write to.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from envqa.core.consistency.guards import instruction_file
from envqa.core.consistency.verifier_writes import verifier_writes
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.task_model.model import tests_of

INCLUSIVE_BOUND = re.compile(
    r"\b(?P<side>at least|no less than|not less than|a minimum of|minimum of|at most|no more than|not more than|"
    r"a maximum of|maximum of)\s+(?:an?\s+\w+\s+of\s+)?(?P<num>\d+(?:\.\d+)?)\s*(?P<pct>%|percent)?",
    re.I,
)
LISTERS = {"listdir", "glob", "iterdir", "scandir"}


def _bounds(instruction: str) -> list[tuple[str, float, int, str]]:
    """("min" | "max", value, line, text) for each inclusive bound the instruction states."""
    out = []
    for n, line in enumerate(instruction.splitlines(), 1):
        for m in INCLUSIVE_BOUND.finditer(line):
            side = "max" if re.search(r"most|max|more", m.group("side"), re.I) else "min"
            value = float(m.group("num")) / (100.0 if m.group("pct") else 1.0)
            out.append((side, value, n, line.strip()))
    return out


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


def _strict_asserts(tree: ast.Module) -> list[tuple[str, float, int]]:
    """("min" | "max", bound, line) for each `assert x > B` / `assert x < B` (either order) of a test."""
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
                out.append(("max" if flip else "min", bound, node.lineno))
            elif isinstance(op, ast.Lt):
                out.append(("min" if flip else "max", bound, node.lineno))
    return out


def threshold_findings(env: Environment) -> list[Finding]:
    bounds = _bounds(env.instruction)
    if not bounds:
        return []
    out = []
    for f in tests_of(env).python:
        if f.tree is None:
            continue
        for side, bound, line in _strict_asserts(f.tree):
            said = next((b for b in bounds if b[0] == side and abs(b[1] - bound) < 1e-9), None)
            if said is None:
                continue
            out.append(
                Finding.of(
                    "test-threshold-stricter-than-instruction",
                    message=f"the instruction allows {bound:g} itself ({'at least' if side == 'min' else 'at most'}"
                    f") but the test's comparison is strict: work exactly at the stated bound fails",
                    evidence=[
                        f"test: {f.rel}:{line}: {f.line(line)}",
                        f"instruction: {instruction_file(env)}:{said[2]}: {said[3]}",
                    ],
                    location=f"{f.rel}:{line}",
                )
            )
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


def _exact_listings(tree: ast.Module) -> list[tuple[str, int]]:
    """(directory, line) of each equality between a directory's listing and a literal list or set."""
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
                out.append((d, n.lineno))
    return out


def _instruction_writes(instruction: str) -> list[tuple[str, int, str]]:
    """(path, line, text) of each file a command in the instruction writes (`-o path`, a redirection, tee)."""
    out = []
    for n, line in enumerate(instruction.splitlines(), 1):
        out += [(p, n, line.strip()) for p in sorted(verifier_writes(line).paths)]
    return out


def listing_findings(env: Environment) -> list[Finding]:
    writes = _instruction_writes(env.instruction)
    if not writes:
        return []
    out = []
    for f in tests_of(env).python:
        if f.tree is None:
            continue
        for directory, line in _exact_listings(f.tree):
            hit = next((w for w in writes if str(PurePosixPath(w[0]).parent) == directory), None)
            if hit is None:
                continue
            out.append(
                Finding.of(
                    "tests-require-listing-instruction-breaks",
                    message=f"the test compares the exact listing of {directory}, but the instruction's own "
                    f"command writes {hit[0]} there: an agent that follows the instruction fails it",
                    evidence=[
                        f"test: {f.rel}:{line}: {f.line(line)}",
                        f"instruction: {instruction_file(env)}:{hit[1]}: {hit[2]}",
                    ],
                    location=f"{f.rel}:{line}",
                )
            )
    return out


def bound_findings(env: Environment) -> list[Finding]:
    """Both rules above; static_findings (probes/static/findings.py) calls it."""
    if not env.instruction.strip() or not env.tests:
        return []
    return threshold_findings(env) + listing_findings(env)
