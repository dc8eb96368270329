"""A task no setup solved, sorted by cause (issue 53 item 4).

Published work found that about a third of the zero-pass tasks in a new benchmark were not hard at all, so "no
agent passes" is a question, not an answer. Each such task (no honest pass in the pool: passes that a trajectory
proves were shortcuts do not count) is one kind, tried in this order, with the evidence it rests on:
- `broken-oracle`: an oracle trial is in the runs (`qa run`, or an oracle trial in the job) and it failed too;
- `infra`: nothing was measured (every trial is a harness problem), or nearly every failure is an agent timeout
  cut off before any test ran (a timed-out agent whose tests ran and failed made an honest attempt);
- `verifier-error`: nearly every failure, in every setup that failed, is an error in the verifier itself (a
  module it cannot import, a tool not found: probes/cross_trial/verifier_errors.py);
- `exploit-only`: the only passes are shortcuts (copied-verifier-values, trajectory-tampers-verifier);
- `underspecified`: a finding labelled ambiguity (warning or above) holds the failures against the task: the
  cross-trial rules' converging values or missing file, and the failures read against the assertion model
  (failures-on-unstated-requirement, probes/cross_trial/failures.py); one that cites trials is the evidence
  before a static one read from the files alone;
- `hard`: none of the above: a stated requirement, failed in varied honest attempts (the distinct failing tests
  and messages are counted, so a reader sees whether the attempts were varied or too few to say).
"""

from __future__ import annotations

from collections.abc import Iterable

from envqa.core.defaults import CROSS_TRIAL_ALONE_SHARE
from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.probes.cross_trial.verifier_errors import verifier_error

KINDS = ("broken-oracle", "infra", "verifier-error", "exploit-only", "underspecified", "hard")
SHORTCUTS = {"copied-verifier-values", "trajectory-tampers-verifier"}
UNDERSPECIFIED_LABELS = {"ambiguity"}  # the hook for item 3: its findings carry this label


def _names(trials: Iterable[ImportedTrial]) -> list[str]:
    return sorted(t.trial_name for t in trials)[:5]


def _kind(kind: str, evidence: str, trials: Iterable[ImportedTrial]) -> dict:
    return {"kind": kind, "evidence": evidence, "trials": _names(trials)}


def _oracle(trials: list[ImportedTrial]) -> dict | None:
    oracle = [t for t in trials if t.agent == "oracle" and t.outcome != Outcome.INFRA]
    if oracle and not any(t.outcome == Outcome.PASS for t in oracle):
        return _kind("broken-oracle", f"the oracle failed {len(oracle)} of {len(oracle)} trial(s) too", oracle)
    return None


def _infra(trials: list[ImportedTrial], pool: dict[str, ImportedTrial]) -> dict | None:
    real = [t for t in trials if t.agent != "oracle"]
    if not pool:
        classes = sorted({t.infra_class or "infra" for t in real if t.outcome == Outcome.INFRA})
        return _kind(
            "infra", f"nothing measured: all {len(real)} trial(s) are harness problems ({', '.join(classes)})", real
        )
    failed = [t for t in pool.values() if t.outcome == Outcome.FAIL]
    timed_out = [t for t in failed if t.agent_timed_out and not t.tests]  # cut off before the tests could say
    if failed and len(timed_out) >= CROSS_TRIAL_ALONE_SHARE * len(failed):
        return _kind(
            "infra",
            f"{len(timed_out)} of {len(failed)} failed trials are agent timeouts with no test result",
            timed_out,
        )
    return None


def _verifier(pool: dict[str, ImportedTrial]) -> dict | None:
    failed = [t for t in pool.values() if t.outcome == Outcome.FAIL]
    errored = [(t, e) for t in failed if (e := verifier_error(t))]
    if not failed or len(errored) < CROSS_TRIAL_ALONE_SHARE * len(failed):
        return None
    if {t.agent_model for t, _ in errored} != {t.agent_model for t in failed}:
        return None
    return _kind(
        "verifier-error",
        f"{len(errored)} of {len(failed)} failed trials end with an error in the verifier: {errored[0][1]}",
        [t for t, _ in errored],
    )


def _hard(pool: dict[str, ImportedTrial]) -> dict:
    failed = [t for t in pool.values() if t.outcome == Outcome.FAIL]
    setups = {t.agent_model for t in failed}
    tests = {x.name for t in failed for x in t.tests if x.status in ("failed", "error")}
    said = {x.message.splitlines()[0][:120] for t in failed for x in t.tests if x.message}
    messages = f"{len(said)} different failure message(s)" if said else "no failure message recorded"
    varied = f"{len(tests)} different failing test(s), {messages}"
    few = "; too few setups to tell hard from unstated" if len(setups) < 2 else ""
    return _kind("hard", f"{len(failed)} honest attempt(s) by {len(setups)} setup(s) failed: {varied}{few}", failed)


def _holds_the_failures(f: Finding, failures: list[dict] | None) -> bool:
    """An ambiguity finding explains the failures when it cites failed trials, or, read from the files alone, when
    the failures were not read against the checks (no task model) or at least one failed on an unstated check."""
    if f.trial_ids or failures is None:
        return True
    return any(x["kind"] == "ambiguity" for x in failures)


def no_pass_kind(
    trials: dict[str, ImportedTrial],
    pool: dict[str, ImportedTrial],
    findings: list[Finding],
    failures: list[dict] | None = None,
) -> dict | None:
    """The kind of a task no setup solved honestly, with its evidence and trials; None when one did. `failures` are
    the failed trials' kinds read against the task model (probes/cross_trial/failures.py), None without one."""
    raised = [f for f in findings if f.severity != Severity.INFO]
    shortcut_ids = {
        i for f in findings if f.rule in SHORTCUTS and "harness problem" not in f.message for i in f.trial_ids
    }
    passes = [tid for tid, t in pool.items() if t.outcome == Outcome.PASS]
    if any(tid not in shortcut_ids for tid in passes):
        return None
    every = list(trials.values())
    found = _oracle(every) or _infra(every, pool) or _verifier(pool)
    if found:
        return found
    if passes:
        return _kind(
            "exploit-only", f"all {len(passes)} pass(es) are shortcuts a trajectory shows", [pool[i] for i in passes]
        )
    ambiguous = min(  # a finding that holds the failures (it cites trials) before one read from the files alone
        (f for f in raised if str(f.label) in UNDERSPECIFIED_LABELS and _holds_the_failures(f, failures)),
        key=lambda f: not f.trial_ids,
        default=None,
    )
    if ambiguous is not None:
        return _kind(
            "underspecified",
            f"{ambiguous.rule}: {ambiguous.message}",
            [trials[i] for i in ambiguous.trial_ids if i in trials],
        )
    return _hard(pool)


def no_pass_table(triages: list[dict]) -> list[dict]:
    """Every no-pass task of an analysis, one row each: task, kind, evidence, trials (the triage's order)."""
    return [{"task": t["task"], **t["no_pass"]} for t in triages if t.get("no_pass")]
