"""A scripted stand-in for a trial, for the scheduler's tests and benchmarks.

It behaves like a model call per its script (sleep, 429 with Retry-After, 5xx, auth error, hang), logs
its own start and end times to a JSON-lines file (so concurrency is measured from what really ran, not
from the scheduler's counters), and records its result in the real store exactly like a trial does.
"""

from __future__ import annotations

import json
import os
import time
from functools import lru_cache

from pydantic import BaseModel, Field

from envqa.core.errors import ProviderAuthError, RateLimited, TransientProviderError
from envqa.core.models import Outcome, TrialResult, TrialSpec
from envqa.scheduler.dispatch import current_attempt
from envqa.scheduler.jobs import JobEnvelope
from envqa.scheduler.queues import queue_for_model
from envqa.store.db import Store


class SimJob(BaseModel):
    spec: TrialSpec
    db_path: str
    log_path: str
    latency_sec: float = 0.05
    # per execution (1st, 2nd, ...): "ok", "429:<retry_after>", "500", "auth", "hang", "crash" (the worker's
    # loop dies: rq's failure bookkeeping raises outside the job, which rq's loop does not survive), "bad-repeat" (the
    # job leaves rq a repeat count it cannot compare, so rq's success bookkeeping raises after the job ran),
    # "bad-failure" (a permanent error, after leaving rq a retry count it cannot compare: rq's failure bookkeeping
    # raises); then "ok"
    script: list[str] = Field(default_factory=list)
    calls: int = 1  # model calls the latency is split into, each logged (ev="call"): what a provider bills
    timeout_sec: int = 600
    storm_until: float | None = None  # epoch seconds: the provider answers 429 until then
    retry_in_place: bool = False  # the common practice: sleep Retry-After holding the worker, then retry
    queue: str | None = None  # default: the spec's model queue


def sim_envelope(job: SimJob) -> JobEnvelope:
    return JobEnvelope(
        job_id=job.spec.trial_id,
        queue=job.queue or queue_for_model(job.spec.model),
        func=f"{__name__}.sim_job",
        payload=job.model_dump(mode="json"),
        on_give_up=f"{__name__}.sim_give_up",
        timeout_sec=job.timeout_sec,
    )


class SimulatedCrash(BaseException):
    """Not an error a job reports but one that takes the worker's loop down (as rq 3's changed signatures did)."""


@lru_cache(maxsize=4)
def _store(path: str) -> Store:
    return Store(path)


def _log(path: str, **event) -> None:
    line = json.dumps({"pid": os.getpid(), "t": time.time(), **event}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())  # one write with O_APPEND: lines from many processes never interleave
    finally:
        os.close(fd)


def sim_job(payload: dict) -> str:
    job = SimJob.model_validate(payload)
    store, tid = _store(job.db_path), job.spec.trial_id
    if store.get_trial(tid) is not None:
        return "already-recorded"
    n = current_attempt()
    queue = job.queue or queue_for_model(job.spec.model)
    action = job.script[n - 1] if n - 1 < len(job.script) else "ok"
    _log(job.log_path, ev="start", id=tid, queue=queue, n=n)
    try:
        while job.storm_until is not None and time.time() < job.storm_until:
            wait = job.storm_until - time.time()
            if not job.retry_in_place:
                raise RateLimited("429 Too Many Requests (simulated storm)", retry_after=wait, model=job.spec.model)
            time.sleep(wait)
        if action.startswith("429"):
            raise RateLimited(
                "429 Too Many Requests (simulated)", retry_after=float(action.split(":")[1]), model=job.spec.model
            )
        if action == "500":
            time.sleep(job.latency_sec / 4)
            raise TransientProviderError("500 Internal Server Error (simulated)", model=job.spec.model)
        if action in ("auth", "bad-failure"):
            if action == "bad-failure":
                from rq import get_current_job

                get_current_job().retries_left = "twice"  # rq's handle_job_failure: '>' between str and int
            raise ProviderAuthError("401 invalid x-api-key (simulated)", model=job.spec.model)
        if action == "crash":  # leave rq a retry count it cannot compare: its failure bookkeeping raises
            from rq import get_current_job

            get_current_job().retries_left = "crash"
            raise SimulatedCrash("the worker loop died (simulated)")
        if action == "hang":
            time.sleep(3600)
        for i in range(job.calls):
            time.sleep(job.latency_sec / job.calls)
            _log(job.log_path, ev="call", id=tid, n=n, i=i)
    finally:
        _log(job.log_path, ev="end", id=tid, queue=queue, n=n)
    fresh = store.record_trial(_result(job, Outcome.PASS, None))
    _log(job.log_path, ev="record", id=tid, n=n, fresh=fresh)
    if action == "bad-repeat":
        from rq import get_current_job

        get_current_job().repeats_left = "twice"  # rq's handle_job_success: '>' between str and int
    return "recorded"


def _result(job: SimJob, outcome: Outcome, error_class: str | None, message: str | None = None) -> TrialResult:
    s = job.spec
    return TrialResult(
        trial_id=s.trial_id,
        run_id=s.run_id,
        env_version=s.env_version,
        agent=s.agent,
        model=s.model,
        purpose=s.purpose,
        outcome=outcome,
        reward=1.0 if outcome == "pass" else None,
        error_class=error_class,
        error_message=message,
    )


def sim_give_up(payload: dict, error_class: str, message: str) -> None:
    job = SimJob.model_validate(payload)
    fresh = _store(job.db_path).record_trial(_result(job, Outcome.INFRA, error_class, message))
    _log(job.log_path, ev="record", id=job.spec.trial_id, fresh=fresh, error_class=error_class)


def noop(payload: dict | None = None) -> None:
    """The dispatch benchmark's job: nothing, so only the scheduling layer is measured."""
