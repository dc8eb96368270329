"""Checks that do not measure the outcome (issue 51 part 4), as queries over the assertion model.

  check-does-not-measure-outcome  (warning) one rule, four cases (the finding's subtype):
    source-text     (shortcut) the check reads the agent's source as text and wants a text in it: a comment or a
                    dead string holding the text passes, whatever the program does;
    method          (brittleness) the check grades how the work was done: the shell history, the tool that ran, or
                    a text the agent's source must not contain (`"import subprocess" not in src`): a correct
                    outcome reached another way fails;
    weak-substring  (shortcut) the check wants a substring of at most 2 characters, a number of at most 2 digits
                    or a common word ("ok", "done", "success") in the output, and nothing else in the same test
                    pins that output: unrelated output passes;
    self-report     (shortcut) the check trusts a value the agent's program reports about itself (a timing it
                    prints, a "PASSED" banner, its own count) and nothing in the same test recomputes it.

Every finding cites the check (its file:line) and every hop the value went through (the helper or fixture that
holds the assert). Nothing here reads a test file: the records come from core/task_model/assertions.py
(`model_of(env).assertions`), whichever language the check is written in. Checks whose expectation is the agent's
own other output are verifier-expectation-from-agent's (probes/static/provenance_rules.py), and existence-only checks
are verifier-checks-only-file-names' (probes/static/verifier_shape_rules.py): not repeated here.
"""

from __future__ import annotations

import re

from envqa.core.consistency.guards import instruction_file
from envqa.core.defaults import OUTCOME_WEAK_CHARS as WEAK_CHARS
from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.task_model.assertions import Assertion
from envqa.core.task_model.model import model_of

RULE = "check-does-not-measure-outcome"
COMMON_WORDS = {"ok", "okay", "done", "success", "successful", "pass", "passed", "true", "yes", "finished", "complete"}
# Where a short substring passes on unrelated text: a program's printed output (an error message, a usage line). A
# file the agent writes is structured by the task (columns, fields), and a short name in it is not weak by itself.
OUTPUTS = ("stdout", "stderr")
PINNING = ("literal", "file", "computed", "threshold", "agent_output")  # an expectation that pins the value
NEGATIVE_OPS = {"not in", "!=", "not match", "not matches", "absent"}
# A sentence of the instruction that forbids a means: the method check then enforces a stated rule, not a guess.
PROHIBITION = re.compile(
    r"\b(?:must not|mustn't|do not|don't|should not|shouldn't|may not|cannot|can't|never|not allowed|forbidden|"
    r"prohibited|avoid|without)\b",
    re.I,
)
SENTENCE = re.compile(r"[^.!?\n]+")


def _weak(value: str | None) -> bool:
    """A literal too common to tell an answer from anything else: 2 characters or fewer, a number of 1-2 digits,
    a common word."""
    if value is None:
        return False
    v = value.strip()
    return len(v) <= WEAK_CHARS or bool(re.fullmatch(r"[-+]?\d{1,2}", v)) or v.lower().rstrip(".!") in COMMON_WORDS


def _negative(a: Assertion) -> bool:
    return a.negated or a.op in NEGATIVE_OPS


def _substring(a: Assertion) -> bool:
    return (a.expected.kind == "pattern" and a.expected.pattern_kind == "substring") or a.op == "in"


NOT_OUTCOMES = ("self_report", "existence", "unknown", "source_text", "shell_history", "exit_code")


def _pins(b: Assertion) -> bool:
    """A check that measures an outcome more than a weak substring or a self-report does: an equality, a long
    pattern, a bound or a computed value over the agent's output."""
    if _negative(b) or b.observes.kind in NOT_OUTCOMES:
        return False
    if b.expected.kind in PINNING:
        return True
    return b.expected.kind == "pattern" and not all(_weak(v) for v in b.expected.values or [b.expected.value])


def _in_test(a: Assertion, records: list[Assertion]) -> list[Assertion]:
    """The other checks of a's test (its file, when the reader names no test)."""
    return [b for b in records if b is not a and (b.test == a.test if a.test else b.file == a.file)]


def _weak_substring(a: Assertion, records: list[Assertion]) -> bool:
    """A weak substring that is all its test asks of the outcome (another check that pins the output, in the same
    test, makes it a smoke check, not the measure)."""
    if a.observes.kind not in OUTPUTS or not _substring(a) or _negative(a):
        return False
    values = a.expected.values or [a.expected.value]
    if not values or not all(_weak(v) for v in values):
        return False
    return not any(_pins(b) and not _weak_substring_shape(b) for b in _in_test(a, records))


def _weak_substring_shape(b: Assertion) -> bool:
    return _substring(b) and all(_weak(v) for v in b.expected.values or [b.expected.value])


def _self_report(a: Assertion, records: list[Assertion]) -> bool:
    """A value the program reports about itself, trusted: nothing in the same test recomputes it or measures the
    outcome another way."""
    if a.observes.kind != "self_report" or a.expected.kind in ("computed", "agent_output", "file") or _negative(a):
        return False
    if a.observes.path is not None:  # a field of a file the agent writes is the output, not a claim about it
        return False
    return not any(_pins(b) for b in _in_test(a, records))


def case_of(a: Assertion, records: list[Assertion]) -> str | None:
    """The case a check is (source-text, method, weak-substring, self-report), or None when it measures the
    outcome as far as the record shows."""
    if a.observes.kind == "source_text" and (a.expected.kind == "pattern" or a.op in ("in", "not in")):
        return "method" if _negative(a) else "source-text"
    if a.observes.kind == "shell_history":
        return "method"
    if _weak_substring(a, records):
        return "weak-substring"
    if _self_report(a, records):
        return "self-report"
    return None


def _values(a: Assertion) -> list[str]:
    """The text or texts a check wants (one per case when a loop or parametrize gives several)."""
    return a.expected.values or ([a.expected.value] if a.expected.value is not None else [])


def _wanted(a: Assertion) -> str:
    values = _values(a)
    return ", ".join(repr(v) for v in values[:4]) or "a value"


def _message(a: Assertion, case: str) -> str:
    src = a.observes.path or "the agent's source"
    prog = " ".join(a.observes.command[:3]) or "the agent's program"
    if case == "source-text":
        return (
            f"the check reads {src} as text and wants {_wanted(a)} in it: a comment or a dead string holding that "
            "text passes, whatever the program does"
        )
    if case == "method" and a.observes.kind == "source_text":
        return (
            f"the check fails when {src} contains {_wanted(a)}: it grades the method, and a correct program that "
            "mentions it (a comment, a fallback) fails"
        )
    if case == "method":
        return (
            f"the check reads {a.observes.path or a.observes.detail or 'the shell history'} (which commands ran): "
            "it grades the method, and a correct outcome reached another way fails"
        )
    if case == "weak-substring":
        where = a.observes.path or f"the output of {prog}"
        return (
            f"the check only wants {_wanted(a)} somewhere in {where}: so short a substring is in unrelated output "
            "(an error message, a line number), so a wrong answer passes"
        )
    return (
        f"the check trusts what {prog} reports about itself ({_wanted(a)}) and nothing in the test recomputes it: "
        "a program that prints the expected value passes"
    )


def _parts(value: str) -> set[str]:
    """The words of a forbidden text (`register_forward_hook`, `import subprocess`), each also without a plural s."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", value)
    words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if len(w) >= 3}
    return words | {w[:-1] for w in words if w.endswith("s")}


def stated_prohibition(a: Assertion, env: Environment) -> str | None:
    """`instruction.md:N: <sentence>` where the instruction forbids what a method check forbids (a sentence with a
    prohibition and a word of the forbidden text: "You must not use hooks" for `"register_forward_hook" not in
    src`); None when it does not."""
    parts = set().union(*(_parts(v) for v in _values(a)))
    if not parts:
        return None
    for n, line in enumerate(env.instruction.splitlines(), 1):
        for sentence in SENTENCE.findall(line):
            words = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", sentence)}
            words |= {w[:-1] for w in words if w.endswith("s")}
            if PROHIBITION.search(sentence) and words & parts:
                return f"instruction: {instruction_file(env)}:{n}: {sentence.strip()}"
    return None


def _evidence(a: Assertion) -> list[str]:
    out = [f"check: {a.where}: {a.code}"]
    for h in a.hops:
        if (h.file, h.line) != (a.file, a.line):
            out.append(f"via {h.kind} {h.name}: {h.file}:{h.line}: {h.code}".replace("  ", " "))
    return out[:6]


def outcome_check_findings(env: Environment) -> list[Finding]:
    """One finding per check that does not measure the outcome, at the check's line."""
    if not env.tests:
        return []
    records = model_of(env).assertions.assertions
    out = []
    for a in records:
        case = case_of(a, records)
        if case is None:
            continue
        stated = stated_prohibition(a, env) if case == "method" and _negative(a) else None
        message = _message(a, case)
        if stated:
            message += "; the instruction forbids it, so the check enforces a stated rule (info)"
        out.append(
            Finding.of(
                RULE,
                message,
                evidence=_evidence(a) + ([stated] if stated else []),
                location=a.where,
                subtype=case,
                severity=Severity.INFO if stated else None,
            )
        )
    return out
