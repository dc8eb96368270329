"""The bodies of the jobs workers run (named in envqa.core.executor): one trial, one probe, one model call.

They live in the app layer because they wire things only the app may join: a role (a trial's agent, a probe,
the trace analyst), a sandbox backend and a store. A worker imports a body by its dotted name; the same body
runs in-process in local mode (envqa.app.local_executor).

Provider trouble (rate limits, 5xx) and transient sandbox failures are raised to the worker, whose policy
parks, retries or gives up; the matching `give_up_*` then records the outcome, so each job ends in the store
either way (a trial as infra with its class, a probe as a lost question, a call as failed).
"""

from __future__ import annotations

import importlib
import json
import os
import socket
from functools import lru_cache
from pathlib import Path

import structlog

from envqa.agents.base import Agent, AgentContext, AgentRun
from envqa.agents.catalog import create_agent
from envqa.agents.trial import run_trial
from envqa.core.config import QAConfig
from envqa.core.environment import version_env
from envqa.core.errors import InputError, ProviderError
from envqa.core.events import EventSink, RunEvent
from envqa.core.executor import Call, ProbeJob, ProbeOutcome, TrialJob, TrialView, outcome_of
from envqa.core.job_bodies import JobKind, register_job_body
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialResult, utcnow
from envqa.core.policy import error_class_of, trial_error
from envqa.core.queues import SANDBOX_QUEUE, queue_for_model
from envqa.core.statuses import CallStatus
from envqa.probes.analyst import model as analyst
from envqa.probes.analyst.trace_view import load_trajectory
from envqa.probes.base import ProbeContext
from envqa.probes.catalog import run_probes
from envqa.probes.replay_units import UNITS
from envqa.providers import create_client
from envqa.sandbox.backends import create_backend
from envqa.scheduler.dispatch import on_beat
from envqa.store.db import Store
from envqa.store.shared_files import for_this_host, trial_files_here, upload_trial_artifacts

log = structlog.get_logger(__name__)


@lru_cache(maxsize=8)
def store_at(path: str) -> Store:
    """One Store per path per worker process (a job body opens it by the path its payload names)."""
    return Store(path)


@lru_cache(maxsize=4)
def backend_for(config_json: str):
    """One sandbox backend per config per worker process (its image cache is worth keeping)."""
    config = QAConfig.model_validate_json(config_json)
    return create_backend(config)


def _record_with_files(store: Store, config: QAConfig, result: TrialResult) -> None:
    """Files first on a shared store: once a trial is recorded, every host can read them."""
    if store.shared:
        upload_trial_artifacts(
            store, result.run_id, result.trial_id, Path(config.runs_dir) / result.run_id / result.trial_id
        )
    store.record_trial(result)


def resolve_config(payload: dict) -> dict:
    """The payload as the submitter built it: its config (and a call's `args.config`) read back from the store by
    the hash the job carries (envqa.scheduler.payloads.by_reference). A payload that carries its config (an
    in-process job) is returned as it is."""
    if "config_hash" not in payload and "config_hash" not in (payload.get("args") or {}):
        return payload
    store = store_at(payload["db_path"])
    out = dict(payload)
    if "config_hash" in out:
        out["config"] = json.loads(store.config_json(out.pop("config_hash")))
    args = out.get("args")
    if isinstance(args, dict) and "config_hash" in args:
        out["args"] = {
            **{k: v for k, v in args.items() if k != "config_hash"},
            "config": json.loads(store.config_json(args["config_hash"])),
        }
    return out


# --- one trial ----------------------------------------------------------------------------------------------


class _CatchProviderError:
    """Wraps the agent so a provider error that run_trial turns into an infra result reaches the policy."""

    def __init__(self, inner: Agent):
        self.inner, self.name, self.error = inner, inner.name, None

    def run(self, ctx: AgentContext) -> AgentRun:
        try:
            return self.inner.run(ctx)
        except ProviderError as e:
            self.error = e
            raise


def run_trial_job(payload: dict) -> dict:
    job = TrialJob.model_validate(resolve_config(payload))
    config = QAConfig.model_validate(job.config)
    store, spec = store_at(str(config.db_path)), job.spec
    config, env_dir = for_this_host(store, config, job.env_dir, spec.env_version)
    done = store.get_trial(spec.trial_id)
    if done is None:
        worker = f"{socket.gethostname()}:{os.getpid()}"
        lease = config.scheduler.lease_ttl_sec
        store.mark_trial_running(spec.trial_id, worker=worker, lease_sec=lease)  # status, attempt, lease: one tx
        on_beat(lambda: store.renew_trial_lease(spec.trial_id, worker, lease))  # the trial's health, per beat
        env = version_env(env_dir, spec.env_version)
        if env.version != spec.env_version:
            raise InputError(env_dir, "the environment changed on disk since this trial was queued")
        agent = _CatchProviderError(create_agent(spec.agent, model=spec.model, config=config))
        result = run_trial(
            spec,
            env,
            backend_for(config.model_dump_json(by_alias=True)),
            config,
            RunLayout(config.runs_dir, spec.run_id),
            agent=agent,
        )
        if agent.error is not None:
            store.save_attempt(result)  # retried; give_up_trial records it if no later attempt does better
            raise agent.error
        retry = trial_error(result)  # the sandbox queue's policy retries it, as a probe's trial is (core/policy.py)
        if retry is not None:
            store.save_attempt(result)
            raise retry
        _record_with_files(store, config, result)
        done = result
    return {"trial_id": done.trial_id, "outcome": done.outcome.value, "reward": done.reward}


def give_up_trial(payload: dict, error_class: str, message: str) -> None:
    """Record the trial as infra with its class (the last attempt's result, from the store, when there is one;
    the attempt's result.json on disk is an export and is not read back)."""
    job = TrialJob.model_validate(resolve_config(payload))
    config = QAConfig.model_validate(job.config)
    spec, store = job.spec, store_at(str(config.db_path))
    config, _env_dir = for_this_host(store, config, job.env_dir, spec.env_version)
    trial_dir = RunLayout(config.runs_dir, spec.run_id).root / spec.trial_id
    result = store.last_attempt(spec.trial_id)
    if result is not None:
        result.outcome, result.error_class = Outcome.INFRA, result.error_class or error_class
        result.error_message = message
    else:
        result = TrialResult(
            trial_id=spec.trial_id,
            run_id=spec.run_id,
            env_version=spec.env_version,
            agent=spec.agent,
            model=spec.model,
            purpose=spec.purpose,
            outcome=Outcome.INFRA,
            error_class=error_class,
            error_message=message,
            finished_at=utcnow(),
        )
    if store.shared and trial_dir.is_dir():
        upload_trial_artifacts(store, spec.run_id, spec.trial_id, trial_dir)
    store.record_trial(result)


# --- one probe ----------------------------------------------------------------------------------------------


def execute_probe_job(job: ProbeJob, backend, store, on_event: EventSink | None = None) -> ProbeOutcome:
    """Run the probe here: rebuild its context from the store and the version, record each trial."""
    emit = on_event or (lambda *a, **k: None)
    config, env_dir = for_this_host(store, QAConfig.model_validate(job.config), job.env_dir, job.env_version)
    env = version_env(env_dir, job.env_version)
    if env.version != job.env_version:
        raise InputError(env_dir, "the environment changed on disk since this probe was queued")
    env = env.model_copy(update={"name": job.env_name})
    validation = [t for t in (store.get_trial(i) for i in job.validation) if t is not None]

    def record(result: TrialResult) -> None:
        _record_with_files(store, config, result)
        emit(RunEvent.TRIAL_DONE, spec=TrialView(result), result=result)

    ctx = ProbeContext(
        env=env,
        config=config,
        backend=backend,
        run_id=job.run_id,
        layout=RunLayout(config.runs_dir, job.run_id),
        validation=validation,
        record=record,
        announce=lambda spec: emit(RunEvent.TRIAL_START, spec=spec),
    )
    if job.probe in UNITS:  # a replay: one trial, no coverage entry of its own
        findings, lost = UNITS[job.probe](ctx, job.args), []
    else:
        findings, lost = run_probes(ctx, [job.probe])
    return ProbeOutcome(
        findings=findings,
        coverage=ctx.coverage,
        lost=lost,
        trial_ids=[t.trial_id for t in ctx.new_trials],
        executed_by=f"{socket.gethostname()}:{os.getpid()}",
    )


def run_probe_job(payload: dict) -> dict:
    """Worker side: run the probe unless its answer is already stored, then store the answer."""
    job = ProbeJob.model_validate(resolve_config(payload))
    config = QAConfig.model_validate(job.config)
    store = store_at(str(config.db_path))
    row = store.get_call(job.job_id)
    if not (row and row["status"] == CallStatus.DONE):
        outcome = execute_probe_job(job, backend_for(config.model_dump_json(by_alias=True)), store)
        store.finish_call(job.job_id, outcome.model_dump(mode="json"))
    return {"call_id": job.job_id, "status": CallStatus.DONE.value}


def give_up_probe(payload: dict, error_class: str, message: str) -> None:
    """The probe could not finish on any attempt: its question stays open (a `lost` coverage entry)."""
    job = ProbeJob.model_validate(resolve_config(payload))
    store_at(str(QAConfig.model_validate(job.config).db_path)).finish_call(
        job.job_id, None, error_class or "infra", message
    )


def run_probe_in_process(job: ProbeJob, backend, store, on_event: EventSink | None = None) -> ProbeOutcome:
    """Local mode: the same job body in this process, with the same stored answer."""
    row = store.get_call(job.job_id)
    if row and row["status"] == CallStatus.DONE:
        return outcome_of(job, row)
    store.mark_call_queued(job.job_id, SANDBOX_QUEUE)
    outcome = execute_probe_job(job, backend, store, on_event)
    store.finish_call(job.job_id, outcome.model_dump(mode="json"))
    return outcome


# --- one model call -----------------------------------------------------------------------------------------


def _func(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


def call_job(payload: dict) -> dict:
    """Worker side: run the function, store its result (provider errors go to the worker's policy)."""
    store = store_at(payload["db_path"])
    row = store.get_call(payload["call_id"])
    if row and row["status"] == CallStatus.DONE:
        return {"call_id": payload["call_id"], "status": CallStatus.DONE.value}
    result = _func(payload["func"])(resolve_config(payload)["args"])
    store.finish_call(payload["call_id"], result)
    return {"call_id": payload["call_id"], "status": CallStatus.DONE.value}


def give_up_call(payload: dict, error_class: str, message: str) -> None:
    store_at(payload["db_path"]).finish_call(payload["call_id"], None, error_class or "infra", message)


def run_call_here(store, call: Call) -> dict:
    """Local executor: run it in this process; a failure is recorded on the row, then re-raised."""
    try:
        result = _func(call.func)(call.args)
    except Exception as e:
        store.finish_call(call.call_id, None, getattr(e, "error_class", None) or error_class_of(e), str(e))
        raise
    store.finish_call(call.call_id, result)
    return result


def mark_queued(store, call: Call) -> bool:
    return store.mark_call_queued(call.call_id, queue_for_model(call.model))


def label_job(args: dict) -> dict:
    """The trace analyst's call: label one trial and store the label; returns the spend. The store is the truth:
    a trial already labelled is not sent to the model again (a re-enqueued job, a resumed run). The trial may
    have run on another host: its trajectory and verifier output then come from the store."""
    job = analyst.AnalystJob.model_validate(args)
    config = QAConfig.model_validate(job.config)
    store = store_at(str(config.db_path))
    existing = store.label_for_trial(job.trial_id)
    if analyst.is_final(existing):
        return {"trial_id": job.trial_id, "label": existing.label, "skipped": True}
    trial = store.get_trial(job.trial_id)
    if trial is None:
        raise LookupError(f"trial {job.trial_id} is not recorded in the store")
    config, env_dir = for_this_host(store, config, job.env_dir, trial.env_version)
    trial = trial_files_here(store, config, trial)
    client = create_client(job.model, config)
    label, spend = analyst.analyze_trial(
        client,
        version_env(env_dir, trial.env_version),
        trial,
        load_trajectory(trial.artifacts_dir),
        job.probe_evidence,
        token_budget=config.analyst.trajectory_tokens,
        max_tokens=config.analyst.max_output_tokens,
        retries=config.solver.structured_retries,
    )
    stored = store.save_label(job.run_id, label, trial.env_version, trial.model)
    log.info(
        "analyst.labelled", trial=job.trial_id, label=stored.label, subtype=stored.subtype, verified=stored.verified
    )
    return {"trial_id": job.trial_id, "label": stored.label, "spend": spend.model_dump(mode="json")}


# Core names these bodies by kind (envqa.core.job_bodies); a worker's job runs the body registered here.
register_job_body(JobKind.TRIAL, run_trial_job)
register_job_body(JobKind.TRIAL_GIVE_UP, give_up_trial)
register_job_body(JobKind.PROBE, run_probe_job)
register_job_body(JobKind.PROBE_GIVE_UP, give_up_probe)
register_job_body(JobKind.CALL, call_job)
register_job_body(JobKind.CALL_GIVE_UP, give_up_call)
register_job_body(JobKind.LABEL, label_job)
