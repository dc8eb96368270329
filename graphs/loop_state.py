"""The run graph's state, keyed by version, and the one way a node gets at the environment.

Findings, trials and infra notes belong to the CURRENT version only. Nodes of one version append to them
(validate, sweep and hunt each add theirs); `adopt` replaces them with an empty list through `fresh()`, so a
new version's verdict never mixes in what an older version showed. What each version showed is kept in the
store (per-version findings, trials by `env_version`) and summarised in `history` for the report.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from envqa.core.environment import Environment
from envqa.core.finding_groups import group_repeat_dicts
from envqa.core.models import TrialResult
from envqa.core.registry.rules import EXPLAINS, PROVEN_BY, Severity
from envqa.core.run_deps import RunDeps
from envqa.core.store import Versions

_RESET = "__reset__"


def per_version(left: list | None, right: Any) -> list:
    """Reducer: append within a version; `fresh()` (written by adopt) starts the next version's list."""
    if isinstance(right, dict) and right.get(_RESET):
        return list(right.get("items", []))
    return list(left or []) + list(right or [])


def per_version_findings(left: list | None, right: Any) -> list:
    """per_version, and two ways a later finding gives the cause of an earlier one:
    - a finding that names its cause (a `subtype`) supersedes the same rule's finding without one: validation's
      `nop-passes` gives way to the hunt's explained one (probes/nop/cause.py);
    - a finding whose rule `explains` another (core/registry/rules.toml) withdraws that rule's findings: the
      egress probe's `network-dependent-pass` explains validation's `oracle-fails`.
    Last, the repeats of a rule in one file become one finding that lists every place (core/finding_groups.py):
    every node appends through here, so the report, the store, the dataset views and the gate's inputs all read
    the grouped list (grouping again groups nothing twice: a group merged with a later repeat lists both's places)."""
    merged = per_version(left, right)
    found = [f for f in merged if isinstance(f, dict)]
    named = {f.get("rule") for f in found if f.get("subtype")}
    explained = {other for f in found for other in EXPLAINS.get(str(f.get("rule")), ())}
    return group_repeat_dicts(
        [
            proven(f, found) if isinstance(f, dict) else f
            for f in merged
            if not (
                isinstance(f, dict)
                and ((f.get("rule") in named and not f.get("subtype")) or f.get("rule") in explained)
            )
        ]
    )


SEVERITIES = list(Severity)  # in rising order
PROVEN = "proven in a run by"  # the evidence line a raised suspicion carries (and is recognised by)


def proven(finding: dict, found: list[dict]) -> dict:
    """A suspicion from the files (`proven_by` in rules.toml) raised by the run's proof of it: the proof's
    severity, its rule and trials named in the evidence (issue 45 item 7: severity by evidence)."""
    proofs = [
        p
        for p in found
        if p.get("rule") in PROVEN_BY.get(str(finding.get("rule")), ())
        and SEVERITIES.index(Severity(p.get("severity", "info"))) >= SEVERITIES.index(Severity.ERROR)
    ]
    evidence = list(finding.get("evidence") or [])
    if not proofs or any(str(e).startswith(PROVEN) for e in evidence):
        return finding
    top = max((Severity(p["severity"]) for p in proofs), key=SEVERITIES.index)
    severity = max(Severity(finding.get("severity", "info")), top, key=SEVERITIES.index)
    trials = sorted({t for p in proofs for t in p.get("trial_ids") or []})
    names = ", ".join(sorted({str(p["rule"]) for p in proofs}))
    return {
        **finding,
        "severity": severity.value,
        "evidence": evidence + [f"{PROVEN} {names}" + (f" (trial {', '.join(trials)})" if trials else "")],
        "trial_ids": sorted(set(finding.get("trial_ids") or []) | set(trials)),
    }


def fresh(items: list | None = None) -> dict:
    return {_RESET: True, "items": list(items or [])}


# What the state keeps of a trial: its id and the fields nodes route on (decide counts failed solver trials,
# the coverage section validation's oracle/nop). The result itself is the store's (one truth), read back by
# id with state_trials; a checkpoint stays small however many trials a version runs.
TRIAL_SUMMARY = {"trial_id", "run_id", "env_version", "agent", "purpose", "model", "outcome", "reward", "error_class"}


def trial_summaries(results: list[TrialResult]) -> list[dict]:
    return [r.model_dump(mode="json", include=TRIAL_SUMMARY) for r in results]


def state_trials(deps: RunDeps, state) -> list[TrialResult]:
    """The current version's trials in full, in the state's order: the store's results for its ids. (A
    checkpoint written before summaries carries whole results; a trial the store lacks is read from it.)"""
    entries = state.get("trials") or []
    if not entries:
        return []
    stored = {t.trial_id: t for t in deps.store.trials_for_run(state["run_id"])}
    # An imported trial (issue 33) is stored once, under the run that first imported it: read it by id.
    return [
        stored.get(t["trial_id"])
        or deps.store.get_trial(t["trial_id"])
        or TrialResult.model_validate({k: v for k, v in t.items() if k != "label"})
        for t in entries
    ]


class RunState(TypedDict, total=False):
    run_id: str
    env_dir: str  # the user's directory: read by `load` only
    spec_dir: str | None  # issue 13: the spec.md directory a `generate` node turned into env_dir
    generation: dict | None  # issue 13: graphs/generate.Generation (every attempt), for the report
    env_name: str
    env_version: str  # same as `version` (kept: older checkpoints and readers use it)
    version: str  # the current version: every node loads its snapshot
    versions: list[str]  # adopted versions, in order (the loaded one first)
    iteration: int
    approval_mode: str
    trials: Annotated[list[dict], per_version]  # trial_summaries(...): ids and routing fields, never whole results
    findings: Annotated[list[dict], per_version_findings]
    incomplete: Annotated[list[str], per_version]
    inconclusive: Annotated[list[dict], per_version]  # probes/inconclusive.py: could not judge (exit 3), never findings
    sweep: dict | None
    labels: dict | None
    coverage: list[dict] | None  # probes/coverage.py: what ran, what was skipped and why
    history: list[dict]  # per-version summaries (decide writes the current one, adopt freezes it)
    request: dict | None
    decision: dict | None
    proposal_id: str | None
    revise_note: str | None
    gate_passed: bool | None
    gate_feedback: str | None
    repairs: int
    approval: dict | None
    stop_reason: str | None
    verdict: str


def versions_of(deps: RunDeps) -> Versions:
    return deps.versions


def current_env(deps: RunDeps, state) -> Environment:
    """The current version's snapshot under the task's own name; never the user's directory (it may change
    under a running loop)."""
    return versions_of(deps).load(state["version"])
