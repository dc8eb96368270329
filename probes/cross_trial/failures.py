"""Failures read against the assertion model (issue 53 item 3), given the task (`qa analyze --tasks`).

Each failing test of a trial (`tests/test_outputs.py::test_foo`, `test_foo[3]`, unittest's `test_foo (mod.Case)`)
is mapped to its checks in the task model by module and function name; each check carries what it requires that
the instruction does not state (core/task_model/unstated_checks.py, the instruction rules' own reading). Then each
failed trial is one kind:
- `infra`: a harness problem, or an agent timeout or harness error with no test result;
- `brittleness`: an error in the verifier itself (probes/cross_trial/verifier_errors.py);
- `ambiguity`: a failing check requires a term the instruction never states (or words otherwise);
- `infra` again: an agent timeout whose tests ran and failed on stated checks (cut off, not wrong);
- `capability`: a stated requirement, failed.

`failures-on-unstated-requirement` (ambiguity, warning) fires when the failed trials of enough setups (sized to the
panel: probes/cross_trial/evidence.py) and most failed trials fail on checks requiring the same unstated term.
Its evidence cites the check's file:line, the instruction's line (or that it never mentions the term) and the
trials; no_pass.py's `underspecified` kind reads it by its label.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Protocol

from envqa.core.consistency.compare import UNSTATED
from envqa.core.defaults import CROSS_TRIAL_UNSTATED_SHARE
from envqa.core.imported import ImportedTrial, TestOutcome
from envqa.core.models import Finding, Outcome, Severity
from envqa.core.task_model.unstated_checks import TestChecks, UnstatedTerm
from envqa.probes.cross_trial.evidence import FAILED, NOT_POOL
from envqa.probes.cross_trial.verifier_errors import verifier_error

RULE = "failures-on-unstated-requirement"
KINDS = ("capability", "ambiguity", "brittleness", "infra")
WHAT = {"flag": "option", "key": "key", "exec": "program", "output": "output", "user": "user name", "url": "URL"}
UNITTEST = re.compile(r"^(?P<fn>\w+) \((?P<mod>[\w.]+)\)$")  # unittest's "test_foo (test_mod.Case)"


class TaskTrials(Protocol):
    """What this rule reads of probes/cross_trial/probe.TaskTrials (a Protocol: no import cycle)."""

    task: str
    trials: dict[str, ImportedTrial]
    checks: dict[str, TestChecks] | None

    def pool(self) -> dict[str, ImportedTrial]: ...

    def enough(self, key: str, had: int) -> bool: ...


def test_key(name: str) -> tuple[str | None, str]:
    """(module stem or None, function) of a test id as a harness or the assertion model writes it."""
    name = re.sub(r"\[.*\]$", "", name.strip())
    m = UNITTEST.match(name)
    if m:
        return m.group("mod").split(".")[0], m.group("fn")
    if "::" in name:
        parts = name.split("::")
        return parts[0].rsplit("/", 1)[-1].removesuffix(".py"), re.sub(r"\[.*\]$", "", parts[-1])
    if "." in name:  # test_mod.Case.test_foo
        parts = name.split(".")
        return parts[0], parts[-1]
    return None, name


test_key.__test__ = False  # type: ignore[attr-defined]  # a helper, not a pytest test


def checks_of(name: str, checks: dict[str, TestChecks]) -> list[TestChecks]:
    """The model's tests a failing test id is: the same function, in the same module when the id names one."""
    mod, fn = test_key(name)
    out = []
    for model_name, tc in checks.items():
        m_mod, m_fn = test_key(model_name)
        if m_fn == fn and (mod is None or m_mod == mod):
            out.append(tc)
    return out


def _failing(t: ImportedTrial) -> list[TestOutcome]:
    return [x for x in t.tests if x.status in FAILED]


def _unstated(t: ImportedTrial, checks: dict[str, TestChecks]) -> list[tuple[TestOutcome, UnstatedTerm]]:
    return [(x, u) for x in _failing(t) for tc in checks_of(x.name, checks) for u in tc.unstated]


def _stated_check(t: ImportedTrial, checks: dict[str, TestChecks]) -> str:
    for x in _failing(t):
        for tc in checks_of(x.name, checks):
            if tc.checks:
                return f"{x.name} fails its check at {tc.checks[0]}, a requirement the instruction states"
    failing = ", ".join(x.name for x in _failing(t)[:3])
    return f"{failing} failed (no check of the task model matched)" if failing else "failed with no test result"


def classify(t: ImportedTrial, checks: dict[str, TestChecks]) -> tuple[str, str]:
    """A failed trial's kind and why, in the order of the module docstring."""
    if t.outcome == Outcome.INFRA:
        return "infra", f"a harness problem: {t.infra_class or t.error_message or 'infra'}"
    if not t.tests and (t.agent_timed_out or t.error_message):
        said = "the agent timed out" if t.agent_timed_out else f"a harness error: {t.error_message}"
        return "infra", f"{said}, before any test result"[:200]
    error = verifier_error(t)
    if error:
        return "brittleness", f"an error in the verifier: {error}"
    hits = _unstated(t, checks)
    if hits:
        x, u = hits[0]
        return "ambiguity", f"{x.name}: the check at {u.check} requires {_term(u)}, {_said(u)}"
    if t.agent_timed_out:
        return "infra", "the agent timed out; its tests ran and failed on stated checks"
    return "capability", _stated_check(t, checks)


def failure_kinds(task: TaskTrials) -> list[dict] | None:
    """Each failed trial of the task (pool and infra; not the oracle or the empty agent): its kind and why. None
    without a task model (no --tasks): a failure not held against the checks has no kind to give."""
    if task.checks is None:
        return None
    out = []
    for _, t in sorted(task.trials.items(), key=lambda kv: kv[1].trial_name):
        if t.outcome == Outcome.PASS or t.agent in NOT_POOL:
            continue
        kind, why = classify(t, task.checks)
        out.append({"trial": t.trial_name, "group": t.agent_model, "kind": kind, "why": why[:240]})
    return out


def _term(u: UnstatedTerm) -> str:
    return f"the {WHAT.get(u.what, u.what)} {u.want}"


def _said(u: UnstatedTerm) -> str:
    return "which the instruction never states" if u.rule == UNSTATED else "which the instruction words otherwise"


def failures_on_unstated_requirement(task: TaskTrials) -> list[Finding]:
    """One finding when most failed trials, in enough setups, fail checks requiring one unstated term (the
    term most of them share; the other terms that qualify are named in it)."""
    if not task.checks:
        return []
    pool = task.pool()
    failed = {tid: t for tid, t in pool.items() if t.outcome == Outcome.FAIL and not verifier_error(t)}
    by_term: dict[tuple[str, str], list[tuple[str, TestOutcome, UnstatedTerm]]] = defaultdict(list)
    for tid, t in failed.items():
        seen: set[tuple[str, str]] = set()
        for x, u in _unstated(t, task.checks):
            if u.term not in seen:
                seen.add(u.term)
                by_term[u.term].append((tid, x, u))
    fired = []
    for _key, hits in sorted(by_term.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        setups = sorted({pool[tid].agent_model for tid, _, _ in hits})
        if task.enough("unstated-setups", len(setups)) and len(hits) >= CROSS_TRIAL_UNSTATED_SHARE * len(failed):
            fired.append((hits, setups))
    if not fired:
        return []
    hits, setups = fired[0]
    also = [_term(h[0][2]) for h, _ in fired[1:4]]
    return [_finding(task, hits, setups, len(failed), also)]


def _finding(
    task: TaskTrials, hits: list[tuple[str, TestOutcome, UnstatedTerm]], setups: list[str], n: int, also: list[str]
) -> Finding:
    _, x0, u0 = hits[0]
    checks = sorted({u.check for _, _, u in hits})
    panel = len({t.agent_model for t in task.pool().values()})
    evidence = [f"check {u0.check} ({x0.name}) requires {_term(u0)}; instruction: {u0.instruction}"]
    for tid, x, _ in hits[:6]:
        t = task.trials[tid]
        said = x.message.strip().splitlines()[0][:200] if x.message.strip() else "no message"
        evidence.append(f"trial {t.trial_name} ({t.agent_model}) {x.name}: {said}")
    evidence += [f"check {u.check}: {u.code}" for u in {u.check: u for _, _, u in hits}.values()][:4]
    return Finding.of(
        RULE,
        message=f"{len(hits)} of {n} failed trials, in {len(setups)} of {panel} setups ({', '.join(setups)}), fail "
        f"checks that require {_term(u0)} ({', '.join(checks[:3])}), {_said(u0)}"
        + (f" (the same failures also require {', '.join(also)})" if also else "")
        + ": the failures say what the instruction leaves out, not what the agents could do",
        severity=Severity.WARNING,
        evidence=evidence[:12],
        location=f"{task.task}: {u0.check}",
        trial_ids=sorted(tid for tid, _, _ in hits),
    )
