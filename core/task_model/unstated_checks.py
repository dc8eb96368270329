"""Each test's checks, with what they require that the instruction does not state (issue 53 item 3): the query the
failures of imported trials are read against.

The instruction rules (probes/static/instruction_rules.py) report a requirement once, at its first check. A failing
trial fails a test, so here every check of every test is kept with the requirements it makes: the flags and keys
each record requires (core/task_model/tested_terms.py, record by record), and the paths, names and spellings of
the instruction comparison (core/task_model/facts.py) whose file:line the check's value passes through. Nothing
here reads a test file: the records are the assertion model's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from envqa.core.consistency.compare import UNSTATED, Mismatch
from envqa.core.environment import Environment
from envqa.core.task_model.assertions import Assertion
from envqa.core.task_model.facts import instruction_mismatches
from envqa.core.task_model.model import model_of
from envqa.core.task_model.tested_terms import flag_key_mismatches

PER_RECORD = ("flag", "key")  # read record by record (the comparison's list keeps the first check only)


@dataclass(frozen=True)
class UnstatedTerm:
    """One thing a check requires that the instruction does not state as the check has it."""

    rule: str  # the static rule that reads it (instruction-omits-tested-requirement, -contradicts-, -spelling-)
    what: str  # flag, key, output, exec, path, user, branch, spelling, decimals, ...
    want: str  # the tests' literal
    check: str  # the check's file:line
    code: str  # the check's line
    instruction: str  # "instruction.md:3: <line> (names the program, not --limit)" | "instruction.md: never mentions X"

    @property
    def term(self) -> tuple[str, str]:
        return (self.what, self.want)


@dataclass
class TestChecks:
    """One test of the verifier (as the assertion model names it: `tests/test_x.py::test_a`): its checks' file:line
    and what they require that the instruction does not state."""

    __test__ = False  # not a pytest class

    test: str
    checks: list[str] = field(default_factory=list)
    unstated: list[UnstatedTerm] = field(default_factory=list)


def _instruction_line(m: Mismatch, instruction_file: str) -> str:
    if m.claim is not None and m.what == "flag":
        return f"{instruction_file}:{m.claim.line}: {m.claim.text} (names the program, not {m.want})"
    if m.claim is not None:
        states = f" (states {m.stated})" if m.stated and m.rule != UNSTATED else ""
        return f"{instruction_file}:{m.claim.line}: {m.claim.text}{states}"
    if m.stated and m.rule != UNSTATED:
        return f"{instruction_file}: states {m.stated!r} instead of {m.want!r}"
    return f"{instruction_file}: never mentions {m.want}"


def _term(m: Mismatch, a: Assertion, instruction_file: str) -> UnstatedTerm:
    return UnstatedTerm(m.rule, m.what, m.want, a.where, a.code, _instruction_line(m, instruction_file))


def checks_by_test(env: Environment) -> dict[str, TestChecks]:
    """Every test the assertion model names, with its checks and the terms they require unstated; {} when the task
    has no instruction or no tests (the instruction rules read nothing there either)."""
    if not env.instruction.strip() or not env.tests:
        return {}
    facts, found = instruction_mismatches(env)
    model = model_of(env)
    records = model.assertions.assertions
    per_record: dict[tuple[str, int], list[Mismatch]] = {}
    for m in flag_key_mismatches(env, facts, records, model.provenance):
        per_record.setdefault((m.test.file, m.test.line), []).append(m)
    others = [m for m in found if m.what not in PER_RECORD]
    out: dict[str, TestChecks] = {}
    for a in records:
        if not a.test:
            continue
        tc = out.setdefault(a.test, TestChecks(a.test))
        if a.where not in tc.checks:
            tc.checks.append(a.where)
        lines = set(a.lines())
        ms = per_record.get((a.file, a.line), []) + [m for m in others if (m.test.file, m.test.line) in lines]
        seen = {(u.term, u.check) for u in tc.unstated}
        for m in ms:
            u = _term(m, a, facts.instruction.file)
            if (u.term, u.check) not in seen:
                seen.add((u.term, u.check))
                tc.unstated.append(u)
    return out
