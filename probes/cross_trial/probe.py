"""Cross-trial rules (issue 33): what many agents' trials of one task say about the task, with no model.

The input is every trial of one task in the format-neutral shape (core/imported.py): trials imported from
Harbor jobs and `tb run` folders, and qa's own solver trials read into the same shape
(probes/cross_trial/qa.py). The rules:
- `test-fails-alone`: one test accounts for most failures of agents that passed every other test, across at
  least two agents. An error only with evidence in the failure text (converging values, or a literal the
  instruction words differently); else a warning to review, since a genuinely hard task's core test also
  fails alone. Never on a single-test task, nor for a fail-to-pass test the empty agent also fails.
- `converging-wrong-answers`: failed trials of at least two different models end with the same wrong value
  on the same test.
- `copied-verifier-values` / `trajectory-tampers-verifier`: a passing trajectory copied values out of the
  verifier's output, or wrote the verifier's files (probes/cross_trial/steps.py), with step ids.
- `failures-on-unstated-bound`: a failure text shows a test's bound (`assert 0 > 6`) that the instruction never
  states (probes/cross_trial/bounds.py).
- `failures-on-unstated-requirement`: with the task model (--tasks), most failed trials in enough setups fail
  checks requiring a term the instruction never states (probes/cross_trial/failures.py).
- `outlier-pass`: one agent passes what every other agent of the pool fails (info: review this pass).
- `agent-never-ran`: a harness problem, never in a pass rate (info).
Each finding cites its trials (`trial_ids`) and quotes the tests and steps it rests on (`evidence`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from envqa.core.defaults import CROSS_TRIAL_ALONE_SHARE, CROSS_TRIAL_CONVERGING_SHARE, CROSS_TRIAL_NEAR_CEILING
from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.core.task_model.unstated_checks import TestChecks
from envqa.probes.cross_trial.bounds import failures_on_unstated_bound
from envqa.probes.cross_trial.evidence import EMPTY_AGENTS, FAILED, NOT_POOL, Coverage, Panel
from envqa.probes.cross_trial.failures import failures_on_unstated_requirement
from envqa.probes.cross_trial.missing import verifier_wants_missing_file
from envqa.probes.cross_trial.pool_rules import agent_never_ran, outlier_pass
from envqa.probes.cross_trial.steps import copied_values, looked_at_tests, tampering
from envqa.probes.cross_trial.text import (
    STATUS,
    Difference,
    at_threshold,
    difference,
    differently_worded,
    failure_subject,
    one_line,
    same_message,
)
from envqa.probes.cross_trial.verifier_errors import verifier_error, verifier_errors_everywhere

EMPTYISH = {"None", "''", '""', "[]", "{}", "()", "null", "b''"}  # no output at all: a crash, not an answer
# A verdict, not an answer: a boolean, or a bare number in a message about an exit status (`assert 1 == 0` where
# 1 = ....returncode). Many models failing the same exit-status check is a crash in common, not a reading.
FLAGS = {"True", "False", "true", "false"}


@dataclass
class TaskTrials:
    """Every trial of one task, by trial id, with what the rules read from the task itself (when known)."""

    task: str
    trials: dict[str, ImportedTrial]
    instruction: str = ""
    verifier_tools: set[str] = field(default_factory=set)
    coverage: Coverage = field(default_factory=Coverage)  # the needs that fell short (probes/cross_trial/evidence.py)
    checks: dict[str, TestChecks] | None = None  # the task model's tests (--tasks): probes/cross_trial/failures.py

    def pool(self) -> dict[str, ImportedTrial]:
        """The measured trials of real agents: not infra, not the oracle or the empty agent."""
        return {tid: t for tid, t in self.trials.items() if t.agent not in NOT_POOL and t.outcome != Outcome.INFRA}

    def panel(self) -> Panel:
        """The pool's size, which sizes every rule's least evidence."""
        return Panel.of(self.pool())

    def enough(self, key: str, had: int) -> bool:
        return self.coverage.enough(key, self.panel(), had)


def recorded_instruction(trials: list[ImportedTrial]) -> str:
    """The instruction the trials' own records hold (a `tb run` keeps it in every TrialResults), the most common
    one where versions differ; "" where none does. Without the task on disk (no --tasks) it is what the failures
    are read against: a literal the test wants and the instruction words otherwise, a file it never names."""
    said = Counter(t.instruction for t in trials if t.instruction.strip())
    return said.most_common(1)[0][0] if said else ""


def model_of(t: ImportedTrial) -> str:
    return t.model or t.agent


def failed_tests(t: ImportedTrial) -> set[str]:
    return {x.name for x in t.tests if x.status in FAILED}


def fails_alone(t: ImportedTrial) -> str | None:
    """The one test a failed trial failed while passing every other, or None."""
    bad = failed_tests(t)
    if t.outcome != Outcome.FAIL or len(bad) != 1 or not any(x.status == "passed" for x in t.tests):
        return None
    return next(iter(bad))


def _finding(
    rule: str, message: str, evidence: list[str], ids: list[str], location: str, severity: Severity | None = None
) -> Finding:
    """A cross-trial finding: label, most severity and fix from the rule's registry row."""
    return Finding.of(
        rule=rule,
        severity=severity,
        message=message,
        evidence=evidence[:12],
        location=location,
        trial_ids=sorted(ids),
    )


def _message(t: ImportedTrial, test: str) -> str:
    return next((x.message for x in t.tests if x.name == test), "")


def _fail_to_pass(task: TaskTrials, test: str) -> bool:
    """The empty agent fails this test and passes another: the test checks the work itself (SWE-style)."""
    return any(
        t.agent in EMPTY_AGENTS and test in failed_tests(t) and any(x.status == "passed" for x in t.tests)
        for t in task.trials.values()
    )


def _informative(d: Difference, message: str) -> bool:
    if d.got in EMPTYISH or d.got in FLAGS:
        return False
    return not (re.fullmatch(r"-?\d+", d.got) and STATUS.search(message))


def _converging(task: TaskTrials, test: str, ids: list[str]) -> tuple[Difference, list[str]] | None:
    """The wrong value most trials of `ids` end with on `test`, when independent agents and models share it
    (the panel-sized `converging-trials` need, two agents, two models) and it is what most of the failures that state
    a value end with: the same wrong value is a second reading of the spec; many different ones, a hard task."""
    by_key: dict[str, list[str]] = defaultdict(list)
    diffs: dict[str, Difference] = {}
    for tid in ids:
        d = difference(_message(task.trials[tid], test))
        if d is not None and _informative(d, _message(task.trials[tid], test)):
            by_key[d.got].append(tid)  # the wrong value, whatever the run's expected value (it may vary by run)
            diffs.setdefault(d.got, d)
    best = max(by_key, key=lambda k: (len({model_of(task.trials[i]) for i in by_key[k]}), len(by_key[k])), default=None)
    voiced = [i for v in by_key.values() for i in v]
    if best is None or not _independent(task, by_key[best], voiced):
        return None
    if len(by_key[best]) < CROSS_TRIAL_CONVERGING_SHARE * sum(len(v) for v in by_key.values()):
        return None
    return diffs[best], by_key[best]


def _independent(task: TaskTrials, ids: list[str], voiced: list[str] | None = None) -> bool:
    """Two models and two agents among `ids`, and the `converging-trials` need, sized to the setups whose failures
    state a value on the test (`voiced`; a setup whose failure says nothing cannot agree or disagree), else to the
    pool."""
    trials = [task.trials[i] for i in ids]
    panel = Panel.of({i: task.trials[i] for i in voiced}) if voiced is not None else task.panel()
    return (
        len({model_of(t) for t in trials}) >= 2
        and len({t.agent for t in trials}) >= 2
        and task.coverage.enough("converging-trials", panel, len(trials))
    )


def _pass_rate(pool: dict[str, ImportedTrial]) -> float:
    return sum(t.outcome == Outcome.PASS for t in pool.values()) / len(pool) if pool else 0.0


def _quote(task: TaskTrials, tid: str, test: str) -> str:
    t = task.trials[tid]
    return f"trial {t.trial_name} ({t.agent_model}) {test}: {one_line(_message(t, test))}"


def _worded(task: TaskTrials, test: str, ids: list[str]) -> tuple[str, list[str]] | None:
    """The instruction's own spelling of a literal `test` wants, and the trials whose failure text shows the test
    wanting it otherwise (`assert 'sha256' in ...` where the instruction says SHA-256); None when none does."""
    word, hits = None, []
    for i in ids:
        d = difference(_message(task.trials[i], test))
        w = differently_worded(d.want, task.instruction) if d else None
        if w:
            word, hits = word or w, [*hits, i]
    return (word, hits) if word else None


def _alone_by_test(pool: dict[str, ImportedTrial], failed: list[str]) -> dict[str, list[str]]:
    alone: dict[str, list[str]] = defaultdict(list)
    for tid in failed:
        test = fails_alone(pool[tid])
        if test is not None:
            alone[test].append(tid)
    return alone


def test_fails_alone(task: TaskTrials) -> list[Finding]:
    """A test most failures fail alone: an error with a textual witness (converging values, or a literal the
    instruction words otherwise) on a pool with enough agents; a warning without one, or when the witness is the
    failure text of fewer setups than the counts need (the `worded-setups` need: the instruction is the second
    witness, so one setup's failure text showing the mismatch is enough to look)."""
    pool = task.pool()
    names = {x.name for t in pool.values() for x in t.tests}
    failed = [tid for tid, t in pool.items() if t.outcome == Outcome.FAIL and t.tests]
    if len(names) < 2 or not failed or _pass_rate(pool) >= CROSS_TRIAL_NEAR_CEILING:
        return []
    out = []
    for test, ids in sorted(_alone_by_test(pool, failed).items()):
        if len(ids) * 2 <= len(failed) or _fail_to_pass(task, test):
            continue
        worded = _worded(task, test, ids)
        counted = task.enough("alone-trials", len(ids)) and task.enough(
            "alone-agents", len({pool[i].agent for i in ids})
        )
        if not counted and not (worded and task.enough("worded-setups", len({pool[i].agent_model for i in worded[1]}))):
            continue
        converging = _converging(task, test, ids) if counted else None
        why = []
        if converging:
            why.append(f"{len(converging[1])} trials end with the same wrong value {converging[0].got}")
        if worded:
            why.append(f"the test expects a literal the instruction words as {worded[0]!r}")
        if not why and len(ids) < CROSS_TRIAL_ALONE_SHARE * len(failed):
            continue  # a hard task's core test: most, not nearly all, failures
        out.append(_alone_finding(task, test, ids, failed, why, counted))
    return out


def _alone_finding(
    task: TaskTrials, test: str, ids: list[str], failed: list[str], why: list[str], counted: bool
) -> Finding:
    agents = {task.trials[i].agent_model for i in ids}
    tail = (
        ("; " + "; ".join(why))
        if why
        else "; the failure texts do not converge: review whether the instruction admits another answer or the test is "
        "just hard"
    )
    return _finding(
        "test-fails-alone",
        f"{test} fails alone in {len(ids)} of {len(failed)} failed trials, across "
        f"{len(agents)} agents ({', '.join(sorted(agents))}){tail}",
        [_quote(task, i, test) for i in ids[:4]],
        ids,
        f"{task.task}: {test}",
        severity=Severity.ERROR if why and counted else Severity.WARNING,
    )


def converging_wrong_answers(task: TaskTrials) -> list[Finding]:
    pool = task.pool()
    by_test: dict[str, list[str]] = defaultdict(list)
    for tid, t in pool.items():
        if t.outcome == Outcome.FAIL:
            for test in failed_tests(t):
                by_test[test].append(tid)
    out = []
    for test, ids in sorted(by_test.items()):
        converging = _converging(task, test, ids)
        if converging is None:
            out += _converging_without_value(task, test, ids) or _same_in_every_setup(task, test, ids)
            continue
        diff, same = converging
        models = sorted({model_of(pool[i]) for i in same})
        out.append(
            _finding(
                "converging-wrong-answers",
                f"{test}: {len(same)} failed trials of {len(models)} different models "
                f"({', '.join(models)}) end with the same wrong value {diff.got} (the test wants "
                f"{diff.want}): the instruction admits another answer",
                [_quote(task, i, test) for i in same[:4]],
                same,
                f"{task.task}: {test}",
            )
        )
    return out


def _who(t: ImportedTrial, hits: list) -> str:
    """ "agent" when the agent's own steps did it; "harness" when only steps the harness typed did (a framework
    that uploads tests or solutions: a harness problem, kept apart from the agent's own reward hacking)."""
    by_id = {s.step_id: s.source for s in t.steps}
    return "agent" if any(by_id.get(h.step_id, "agent") == "agent" for h in hits) else "harness"


def _story(t: ImportedTrial, hits: list) -> str:
    """The steps in order: what it read and ran of the tests before, then what it wrote (one line to read)."""
    last = max(h.step_id for h in hits)
    context = [h for h in looked_at_tests(t.steps) if h.step_id <= last]
    seen: set[tuple[int, str]] = set()
    parts = []
    for h in sorted(context + hits, key=lambda h: h.step_id):
        if (h.step_id, h.what) not in seen:
            seen.add((h.step_id, h.what))
            parts.append(f"step {h.step_id}: {h.what}")
    return "; ".join(parts[:8])


def _converging_without_value(task: TaskTrials, test: str, ids: list[str]) -> list[Finding]:
    """Failures that converge without an `a == b`: a score landing exactly on the test's bound (`assert 6 > 6`: a
    threshold the agents could not see), or one check about one named file ("x.json has been changed"). A
    warning: the text shows where the agents meet, not yet that the instruction reads otherwise."""
    keyed: dict[str, list[str]] = defaultdict(list)
    for tid in ids:
        message = _message(task.trials[tid], test)
        bound = at_threshold(message)
        subject = None if bound else failure_subject(message)
        if bound:
            keyed[f"a score exactly at the bound {bound}"].append(tid)
        elif subject:
            keyed[f"the same check: {subject}"].append(tid)
    best = max(keyed, key=lambda k: len(keyed[k]), default=None)
    if best is None or not _independent(task, keyed[best]):
        return []
    if not best.startswith("a score") and len(keyed[best]) * 2 < len(ids):  # landing on a bound is never chance
        return []
    same = keyed[best]
    models = sorted({model_of(task.trials[i]) for i in same})
    return [
        _finding(
            "converging-wrong-answers",
            f"{test}: {len(same)} of {len(ids)} failed trials, of {len(models)} models ({', '.join(models)}), end at "
            f"{best}: review whether the instruction states what the test holds them to",
            [_quote(task, i, test) for i in same[:4]],
            same,
            f"{task.task}: {test}",
            severity=Severity.WARNING,
        )
    ]


def _same_in_every_setup(task: TaskTrials, test: str, ids: list[str]) -> list[Finding]:
    """Every setup of the pool failed `test` with the same message (its first line, as the check words it): on a
    small panel, where no count of trials can be reached, the agreement of every setup is the evidence. A warning:
    a hard task's core check also fails the same way for everyone who misses it."""
    pool = task.pool()
    keyed: dict[str, list[str]] = defaultdict(list)
    for tid in ids:
        if verifier_error(task.trials[tid]):  # the verifier broke the same way everywhere: verifier-errors-everywhere
            continue
        said = same_message(_message(task.trials[tid], test))
        if said:
            keyed[said].append(tid)
    best = max(keyed, key=lambda k: len({pool[i].agent_model for i in keyed[k]}), default=None)
    setups = {pool[i].agent_model for i in keyed[best]} if best else set()
    if best is None or not task.enough("same-check-setups", len(setups)) or len(setups) < task.panel().setups:
        return []
    same = keyed[best]
    return [
        _finding(
            "converging-wrong-answers",
            f"{test}: every setup of the panel ({len(setups)}: {', '.join(sorted(setups))}) fails it with the same "
            f"message {best!r}: review whether the instruction states what the check holds them to",
            [_quote(task, i, test) for i in same[:4]],
            same,
            f"{task.task}: {test}",
            severity=Severity.WARNING,
        )
    ]


def verifier_shortcuts(task: TaskTrials) -> list[Finding]:
    """One finding per rule, who did it (agent or harness) and task, citing every passing trial whose trajectory
    did it and its steps: a report shows one card per rule of a version, and a person reads the trials side by
    side. The evidence line of a trial tells its steps in order (read the tests, ran them, wrote the value)."""
    hits_by_rule: dict[tuple[str, str], list[tuple[str, ImportedTrial, list]]] = defaultdict(list)
    for tid, t in sorted(task.pool().items()):
        if t.outcome != Outcome.PASS or not t.steps:
            continue
        for rule, hits in (
            ("trajectory-tampers-verifier", tampering(t.steps, task.verifier_tools)),
            ("copied-verifier-values", copied_values(t.steps, task.instruction)),
        ):
            if hits:
                hits_by_rule[(rule, _who(t, hits))].append((tid, t, hits))
    out = []
    for (rule, who), cases in hits_by_rule.items():
        first_tid, first, hits = cases[0]
        steps = ", ".join(str(h.step_id) for h in hits[:6])
        more = f"; {len(cases) - 1} more passing trial(s) did the same" if len(cases) > 1 else ""
        by = "" if who == "agent" else " (steps the harness typed, not the agent: a harness problem)"
        out.append(
            _finding(
                rule,
                f"trial {first.trial_name} ({first.agent_model}) passed, and its trajectory "
                f"{hits[0].what} (steps {steps}){by}{more}",
                [f"trial {t.trial_name} {_story(t, hs)} ({t.agent_model})" for _, t, hs in cases][:12],
                [tid for tid, _, _ in cases],
                f"{first.path} steps {steps}",
            )
        )
    return out


RULES = (
    test_fails_alone,
    converging_wrong_answers,
    verifier_wants_missing_file,
    verifier_errors_everywhere,
    failures_on_unstated_bound,
    failures_on_unstated_requirement,
    verifier_shortcuts,
    outlier_pass,
    agent_never_ran,
)


def cross_trial_findings(task: TaskTrials) -> list[Finding]:
    """Every cross-trial rule on one task's trials, in rule order."""
    return [f for rule in RULES for f in rule(task)]


def per_test_table(task: TaskTrials) -> list[dict]:
    """Test x agent: how many trials failed the test, and how many failed it alone (passing every other)."""
    rows: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for t in task.pool().values():
        alone = fails_alone(t)
        for x in t.tests:
            c = rows[(x.name, t.agent_model)]
            c["trials"] += 1
            c["failures"] += x.status in FAILED
            c["fails_alone"] += x.name == alone
    return [
        {"test": test, "agent": agent, **{k: c[k] for k in ("trials", "failures", "fails_alone")}}
        for (test, agent), c in sorted(rows.items())
    ]
