"""A probe as a job: the unit the hunt and the gate hand to the executor, so that probe trials run on the
`sandbox` queue (its concurrency limit, retries, leases, liveness) like every other trial.

A probe's trials carry live objects (exploit agents, host strace attached to the sandbox, network overrides,
a `keep(sandbox, result)` look at the end state), so one trial cannot travel alone: the whole probe does.
The job names the version, the probe, the config it runs with (the gate's is focused on the parent's
findings) and the validation trials by id. The process that runs it (a worker, or this one in local mode)
rebuilds the ProbeContext from the store and the version's snapshot, runs the probe, and records each trial
as it ends (the store is the truth about trials; a trial id is recorded once). The probe's answer --
findings, coverage, lost questions and the ids of its trials -- is the job's `calls` row, so a probe that
is re-enqueued (Redis restart) or asked again (a resumed run) is not run twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from pathlib import Path
from typing import Callable

from pydantic import BaseModel

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.errors import InputError
from envqa.core.models import Finding, TrialResult
from envqa.scheduler.jobs import JobEnvelope
from envqa.scheduler.queues import SANDBOX_QUEUE
from envqa.scheduler.trial_job import _backend, _store
from envqa.core.layout import RunLayout
from envqa.store.shared_files import for_this_host, upload_trial_artifacts

EventSink = Callable[..., None]


class ProbeJob(BaseModel):
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
        key = json.dumps([self.run_id, self.env_version, self.probe, self.args, self.validation, self.config],
                         sort_keys=True)
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


def probe_jobs(env: Environment, config: QAConfig, run_id: str, units: list[tuple[str, dict]],
               validation: list[TrialResult]) -> list[ProbeJob]:
    """One job per (probe or replay unit, its args)."""
    cfg = config.model_copy(update={"home": Path(config.home).resolve()}).model_dump(mode="json", by_alias=True)
    return [ProbeJob(run_id=run_id, env_version=env.version, env_name=env.name, env_dir=str(Path(env.root).resolve()),
                     probe=name, args=args, validation=[t.trial_id for t in validation], config=cfg)
            for name, args in units]


def probe_envelope(job: ProbeJob, config: QAConfig) -> JobEnvelope:
    return JobEnvelope(job_id=job.job_id, queue=SANDBOX_QUEUE, func=f"{__name__}.run_probe_job",
                       payload=job.model_dump(mode="json"), on_give_up=f"{__name__}.give_up_probe",
                       timeout_sec=config.scheduler.job_timeout_sec)


def execute_probe_job(job: ProbeJob, backend, store, on_event: EventSink | None = None) -> ProbeOutcome:
    """Run the probe here: rebuild its context from the store and the version, record each trial."""
    from envqa.core.environment import load_environment
    from envqa.probes.base import ProbeContext, run_probes
    from envqa.probes.replay_units import UNITS

    emit = on_event or (lambda *a, **k: None)
    config, env_dir = for_this_host(store, QAConfig.model_validate(job.config), job.env_dir, job.env_version)
    env = load_environment(env_dir)
    if env.version != job.env_version:
        raise InputError(env_dir, "the environment changed on disk since this probe was queued")
    env = env.model_copy(update={"name": job.env_name})
    validation = [t for t in (store.get_trial(i) for i in job.validation) if t is not None]

    def record(result: TrialResult) -> None:
        if store.shared:  # files first: once recorded, every host can read them
            upload_trial_artifacts(store, result.run_id, result.trial_id,
                                   Path(config.runs_dir) / result.run_id / result.trial_id)
        store.record_trial(result)
        emit("trial_done", spec=TrialView(result), result=result)

    ctx = ProbeContext(env=env, config=config, backend=backend, run_id=job.run_id,
                       layout=RunLayout(config.runs_dir, job.run_id), validation=validation, record=record,
                       announce=lambda spec: emit("trial_start", spec=spec))
    if job.probe in UNITS:  # a replay: one trial, no coverage entry of its own
        findings, lost = UNITS[job.probe](ctx, job.args), []
    else:
        findings, lost = run_probes(ctx, [job.probe])
    return ProbeOutcome(findings=findings, coverage=ctx.coverage, lost=lost,
                        trial_ids=[t.trial_id for t in ctx.new_trials],
                        executed_by=f"{socket.gethostname()}:{os.getpid()}")


def run_probe_job(payload: dict) -> dict:
    """Worker side: run the probe unless its answer is already stored, then store the answer."""
    job = ProbeJob.model_validate(payload)
    config = QAConfig.model_validate(job.config)
    store = _store(str(config.db_path))
    row = store.get_call(job.job_id)
    if not (row and row["status"] == "done"):
        outcome = execute_probe_job(job, _backend(config.model_dump_json(by_alias=True)), store)
        store.finish_call(job.job_id, outcome.model_dump(mode="json"))
    return {"call_id": job.job_id, "status": "done"}


def give_up_probe(payload: dict, error_class: str, message: str) -> None:
    """The probe could not finish on any attempt: its question stays open (a `lost` coverage entry)."""
    job = ProbeJob.model_validate(payload)
    _store(str(QAConfig.model_validate(job.config).db_path)).finish_call(job.job_id, None, error_class or "infra",
                                                                         message)


def run_in_process(job: ProbeJob, backend, store, on_event: EventSink | None = None) -> ProbeOutcome:
    """Local mode: the same job body in this process, with the same stored answer."""
    row = store.get_call(job.job_id)
    if row and row["status"] == "done":
        return outcome_of(job, row)
    store.mark_call_queued(job.job_id, SANDBOX_QUEUE)
    outcome = execute_probe_job(job, backend, store, on_event)
    store.finish_call(job.job_id, outcome.model_dump(mode="json"))
    return outcome


def outcome_of(job: ProbeJob, row: dict) -> ProbeOutcome:
    """The stored answer of a finished job; a job that gave up is a lost probe, never a silent one."""
    if row["status"] == "done":
        return ProbeOutcome.model_validate_json(row["result_json"])
    why = f"{row.get('error_class') or 'infra'}: {row.get('error_message') or 'the probe job gave up'}"
    return ProbeOutcome(coverage=[{"probe": job.probe, "status": "lost", "reason": why}],
                        lost=[f"probe {job.probe}: {why}"])


def dispatch_probes(executor, store, env: Environment, config: QAConfig, run_id: str, probes: list[str],
                    validation: list[TrialResult]) -> tuple[list[Finding], list[str], list[dict], list[TrialResult]]:
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


def dispatch_replays(executor, store, env: Environment, config: QAConfig, run_id: str,
                     units: list[tuple[str, dict]]) -> list[tuple[TrialResult | None, str]]:
    """Replay units as jobs through the executor, all at once; per unit, in order: (its trial, "") or
    (None, why) when the job gave up before recording one."""
    outcomes = executor.run_probe_jobs(probe_jobs(env, config, run_id, units, [])) if units else []
    replies: list[tuple[TrialResult | None, str]] = []
    for o in outcomes:
        trial = store.get_trial(o.trial_ids[0]) if o.trial_ids else None
        replies.append((trial, "" if trial is not None else "; ".join(o.lost) or "no trial was recorded"))
    return replies
