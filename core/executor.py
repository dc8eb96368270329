"""The `Executor` protocol the loop runs on, and the jobs it carries.

The graph and the roles hand work to an executor and never to a queue: the same graph runs in-process
(envqa.app.local_executor), embedded with Redis workers, or on a worker fleet (envqa.scheduler.rq_executor).
Every executor honours one contract: a trial already recorded in the store is not run again (trial ids are
derived from specs), a job whose answer is stored is not run again, and each result is recorded once.

A job is plain data that names its body by a dotted path (`*_BODY` below): a trampoline of
envqa.core.job_bodies, which calls the body the app registered for its `JobKind`. The bodies live in the app
layer: they wire roles to a sandbox backend and a store, which only the app may import. Workers import the
trampoline by that name, as rq does, so the scheduler carries the name and never imports the body.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.job_bodies import JobKind, job_path
from envqa.core.models import Finding, TrialResult, TrialSpec
from envqa.core.statuses import CallStatus

# Job bodies, by kind: the dotted names are core's trampolines (envqa.core.job_bodies), which call the body
# the app registered for the kind; core never names a function of the app.
TRIAL_BODY = job_path(JobKind.TRIAL)
TRIAL_GIVE_UP = job_path(JobKind.TRIAL_GIVE_UP)
PROBE_BODY = job_path(JobKind.PROBE)
PROBE_GIVE_UP = job_path(JobKind.PROBE_GIVE_UP)
CALL_BODY = job_path(JobKind.CALL)
CALL_GIVE_UP = job_path(JobKind.CALL_GIVE_UP)
LABEL_CALL = job_path(JobKind.LABEL)  # the trace analyst's call: label one trial (needs the store)
GRAPH_BODY = job_path(JobKind.GRAPH)
GRAPH_GIVE_UP = job_path(JobKind.GRAPH_GIVE_UP)


class TrialJob(BaseModel):
    """One trial as a job: the spec, the version's snapshot, and the config it runs with."""

    spec: TrialSpec
    env_dir: str
    config: dict  # QAConfig as JSON, home made absolute: workers may run elsewhere


class Call(BaseModel):
    """A model call that is not a trial (reviser, generator, trace analyst): `func(args) -> dict` on the
    model's own queue, so the model's concurrency limit, parking and retries hold for it too."""

    call_id: str
    model: str
    func: str  # dotted name of `func(args: dict) -> dict`, importable on every worker
    args: dict


class ProbeJob(BaseModel):
    """A probe (or a replay unit) as a job on the `sandbox` queue; see envqa.app.jobs.execute_probe_job."""

    run_id: str
    env_version: str
    env_name: str  # the task's own name (a snapshot's directory is named by its hash; exploits use the name)
    env_dir: str  # the version's snapshot on the submitting host (other hosts read the version from the store)
    probe: str  # a registered probe, or a replay unit (envqa.probes.replay_units.UNITS)
    args: dict = {}  # a replay unit's plain-data arguments (commands, a stored exploit, purpose, index)
    validation: list[str] = []  # trial ids the probe may read (validation, sweep or the gate's oracle runs)
    config: dict  # QAConfig as JSON, home made absolute

    @property
    def job_id(self) -> str:
        """Same run, version, probe, inputs and config: same job (and the same stored answer)."""
        key = json.dumps(
            [self.run_id, self.env_version, self.probe, self.args, self.validation, self.config], sort_keys=True
        )
        return f"probe-{self.probe}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


class ProbeOutcome(BaseModel):
    findings: list[Finding] = []
    coverage: list[dict] = []
    lost: list[str] = []  # questions the machinery left open (run_probes' `lost`)
    trial_ids: list[str] = []  # the probe's trials, in the order they ran; their results are in the store
    executed_by: str = ""  # host:pid of the process that ran the probe


class TrialView:
    """What progress displays and artifact fetching read from a spec (`agent`, `index`, `trial_id`, `run_id`),
    for a probe's own trials."""

    def __init__(self, result: TrialResult):
        # run_id: the executor fetches the trial's files by it (shared store)
        self.agent, self.index, self.trial_id, self.run_id = result.agent, 0, result.trial_id, result.run_id


class Executor(Protocol):
    """Runs the loop's work and records it in the store; every method is idempotent by id."""

    def run(self, env: Environment, specs: list[TrialSpec]) -> list[TrialResult]:
        """Each spec's trial, in order (recorded ones are read back, not run again)."""

    def run_probe_jobs(self, jobs: list[ProbeJob]) -> list[ProbeOutcome]:
        """Each probe job's outcome, in order; a job that gave up is a `lost` outcome, never a silent one."""

    def run_call(self, call: Call, *, deadline_sec: float | None = None) -> dict:
        """One call's result; raises InfraError when it gave up or missed the deadline (`deadline_sec`, by
        default `[scheduler] call_deadline_sec`; in-process executors re-raise the call's own error)."""

    def run_calls(self, calls: list[Call], *, deadline_sec: float) -> dict[str, dict]:
        """Every call at once; {call_id: row} with status `done`, `failed` or (still open at the deadline)
        `queued`. Never raises for one call's failure."""


def absolute_config(config: QAConfig) -> dict:
    """The config as a job carries it: JSON, with `home` absolute (a worker's working directory differs)."""
    return config.model_copy(update={"home": Path(config.home).resolve()}).model_dump(mode="json", by_alias=True)


def trial_job(spec: TrialSpec, env_dir: str | Path, config: QAConfig) -> TrialJob:
    return TrialJob(spec=spec, env_dir=str(Path(env_dir).resolve()), config=absolute_config(config))


def probe_jobs(
    env: Environment, config: QAConfig, run_id: str, units: list[tuple[str, dict]], validation: list[TrialResult]
) -> list[ProbeJob]:
    """One job per (probe or replay unit, its args)."""
    cfg = absolute_config(config)
    return [
        ProbeJob(
            run_id=run_id,
            env_version=env.version,
            env_name=env.name,
            env_dir=str(Path(env.root).resolve()),
            probe=name,
            args=args,
            validation=[t.trial_id for t in validation],
            config=cfg,
        )
        for name, args in units
    ]


def outcome_of(job: ProbeJob, row: dict) -> ProbeOutcome:
    """The stored answer of a finished job; a job that gave up is a lost probe, never a silent one."""
    if row["status"] == CallStatus.DONE:
        return ProbeOutcome.model_validate_json(row["result_json"])
    why = f"{row.get('error_class') or 'infra'}: {row.get('error_message') or 'the probe job gave up'}"
    return ProbeOutcome(
        coverage=[{"probe": job.probe, "status": "lost", "reason": why}], lost=[f"probe {job.probe}: {why}"]
    )


def result_of(row: dict | None) -> dict:
    """A finished call's result (its `calls` row), or {}."""
    return json.loads(row["result_json"]) if row and row.get("result_json") else {}


def results_of(store, call_ids: list[str]) -> list[dict]:
    """The results of those of these calls that are done (e.g. to sum what they cost)."""
    return [result_of(row) for row in (store.get_call(c) for c in call_ids) if row and row["status"] == CallStatus.DONE]
