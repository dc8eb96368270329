"""Where the tests ask for more than the instruction allows, read from both sides (issue 42, item 2; shapes of the
TB2 dev split's 2.0 tasks that 2.1 fixed). Every finding cites the instruction's line and the test's.

  test-threshold-stricter-than-instruction  (brittleness, warning) the instruction says "at least 0.62" and the
      test asserts `accuracy > 0.62` (or "at most N" against `< N`): work exactly at the stated bound fails.
  tests-require-listing-instruction-breaks  (brittleness, warning) a test compares a directory's exact listing
      (`os.listdir(D) == ["main.rs"]`) while a command the instruction gives writes another file into D
      (`g++ ... -o D/cmain`): following the instruction fails the test.

The tests' bounds are the test model's (core/task_model/bounds.py); the listings are a query over the assertion
model (core/task_model/assertions.py): a check that observes a directory's listing and expects it equal to a
literal, however that literal reaches it (inline, a module constant, a fixture, a loop's case). Look-alikes kept quiet: the same
number with an inclusive comparison, a strict bound the instruction words as strict ("more than"), a listing of a
directory the instruction's commands never write to.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from envqa.core.consistency.guards import instruction_file
from envqa.core.consistency.verifier_writes import verifier_writes
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.task_model.assertions import Assertion
from envqa.core.task_model.model import model_of, tests_of

INCLUSIVE_BOUND = re.compile(
    r"\b(?P<side>at least|no less than|not less than|a minimum of|minimum of|at most|no more than|not more than|"
    r"a maximum of|maximum of)\s+(?:an?\s+\w+\s+of\s+)?(?P<num>\d+(?:\.\d+)?)\s*(?P<pct>%|percent)?",
    re.I,
)


def _bounds(instruction: str) -> list[tuple[str, float, int, str]]:
    """("min" | "max", value, line, text) for each inclusive bound the instruction states."""
    out = []
    for n, line in enumerate(instruction.splitlines(), 1):
        for m in INCLUSIVE_BOUND.finditer(line):
            side = "max" if re.search(r"most|max|more", m.group("side"), re.I) else "min"
            value = float(m.group("num")) / (100.0 if m.group("pct") else 1.0)
            out.append((side, value, n, line.strip()))
    return out


def threshold_findings(env: Environment) -> list[Finding]:
    bounds = _bounds(env.instruction)
    if not bounds:
        return []
    out = []
    for f, (side, bound, line) in tests_of(env).strict_bounds:  # core/task_model/bounds.py
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


def _instruction_writes(instruction: str) -> list[tuple[str, int, str]]:
    """(path, line, text) of each file a command in the instruction writes (`-o path`, a redirection, tee)."""
    out = []
    for n, line in enumerate(instruction.splitlines(), 1):
        out += [(p, n, line.strip()) for p in sorted(verifier_writes(line).paths)]
    return out


def exact_listings(env: Environment) -> list[tuple[str, Assertion]]:
    """(directory, check) for each check that a directory's listing equals a literal collection."""
    out = []
    for a in model_of(env).assertions.observing("listing"):
        if a.op == "==" and not a.negated and a.expected.kind == "literal" and a.observes.path:
            out.append((a.observes.path.rstrip("/") or "/", a))
    return out


def listing_findings(env: Environment) -> list[Finding]:
    writes = _instruction_writes(env.instruction)
    if not writes:
        return []
    out = []
    for directory, check in exact_listings(env):
        hit = next((w for w in writes if str(PurePosixPath(w[0]).parent) == directory), None)
        if hit is None:
            continue
        out.append(
            Finding.of(
                "tests-require-listing-instruction-breaks",
                message=f"the test compares the exact listing of {directory}, but the instruction's own "
                f"command writes {hit[0]} there: an agent that follows the instruction fails it",
                evidence=[
                    f"test: {check.where}: {check.code}",
                    f"instruction: {instruction_file(env)}:{hit[1]}: {hit[2]}",
                ],
                location=check.where,
            )
        )
    return out


def bound_findings(env: Environment) -> list[Finding]:
    """Both rules above; static_findings (probes/static/findings.py) calls it."""
    if not env.instruction.strip() or not env.tests:
        return []
    return threshold_findings(env) + listing_findings(env)
