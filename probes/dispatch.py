"""Probes and replay units as jobs through the executor (the hunt's and the gate's way to run probes), so probe
trials run on the `sandbox` queue with its concurrency limit, retries, leases and liveness like every trial.

A probe's trials carry live objects (exploit agents, host strace attached to the sandbox, network overrides,
a `keep(sandbox, result)` look at the end state), so one trial cannot travel alone: the whole probe does. The
process that runs the job (envqa.app.jobs) rebuilds the ProbeContext, runs the probe and records each trial;
the probe's answer is stored with the job, so a probe asked again (a resumed run) is not run twice.
"""

from __future__ import annotations

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.executor import Executor, probe_jobs
from envqa.core.models import Finding, TrialResult


def dispatch_probes(
    executor: Executor,
    store,
    env: Environment,
    config: QAConfig,
    run_id: str,
    probes: list[str],
    validation: list[TrialResult],
) -> tuple[list[Finding], list[str], list[dict], list[TrialResult]]:
    """Run probes as jobs through the executor; (findings, lost, coverage, new trials) in probe order, as
    `run_probes` gives them. The trials are read back from the store."""
    units = [(name, {}) for name in probes]
    outcomes = executor.run_probe_jobs(probe_jobs(env, config, run_id, units, validation)) if units else []
    findings, lost, coverage, trials = [], [], [], []
    for o in outcomes:
        findings += o.findings
        lost += o.lost
        coverage += o.coverage
        trials += [t for t in (store.get_trial(i) for i in o.trial_ids) if t is not None]
    return findings, lost, coverage, trials


def dispatch_replays(
    executor: Executor, store, env: Environment, config: QAConfig, run_id: str, units: list[tuple[str, dict]]
) -> list[tuple[TrialResult | None, str]]:
    """Replay units as jobs through the executor, all at once; per unit, in order: (its trial, "") or
    (None, why) when the job gave up before recording one."""
    outcomes = executor.run_probe_jobs(probe_jobs(env, config, run_id, units, [])) if units else []
    replies: list[tuple[TrialResult | None, str]] = []
    for o in outcomes:
        trial = store.get_trial(o.trial_ids[0]) if o.trial_ids else None
        replies.append((trial, "" if trial is not None else "; ".join(o.lost) or "no trial was recorded"))
    return replies
