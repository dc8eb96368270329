"""Model calls that are not trials (reviser, generator, trace analyst) as jobs on the model's own queue.

Such a call must obey the same limits as the solver's trials on that model: its concurrency, its parking
on a 429, its retries. So on Redis it is enqueued like a trial (job id = call id, queue = the model's
queue) and the caller follows its row in the store's `calls` table; the job re-raises provider errors so
the worker's policy parks or retries, and a job that gives up marks its row `failed` with the error class.
The row is the truth: a call already `done` is never run again, and a `queued` call Redis lost (a restart)
is enqueued again while the caller waits. With the local executor the calls run in this process.

  run_call   one call; returns its result, raises when it failed (reviser, generator)
  run_calls  a batch, all enqueued at once; returns every call's row, never raises (the analyst)
"""

from __future__ import annotations

import importlib
import json
import math
import time
from functools import lru_cache
from pathlib import Path
from typing import Callable

import structlog
from pydantic import BaseModel

from envqa.core.config import QAConfig
from envqa.core.errors import InfraError
from envqa.scheduler.queues import queue_for_model
from envqa.store.db import Store

log = structlog.get_logger(__name__)
RECONCILE_SEC = 5.0  # how often a waiting caller puts back the jobs Redis lost


class Call(BaseModel):
    call_id: str
    model: str
    func: str  # dotted name of `func(args: dict) -> dict`, importable on every worker
    args: dict


def _func(dotted: str):
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)


@lru_cache(maxsize=8)
def store_at(path: str) -> Store:
    """One Store per path per worker process (a job body opens it by the path its payload names)."""
    return Store(path)


def call_job(payload: dict) -> dict:
    """Worker side: run the function, store its result (provider errors go to the worker's policy)."""
    store = store_at(payload["db_path"])
    row = store.get_call(payload["call_id"])
    if row and row["status"] == "done":
        return {"call_id": payload["call_id"], "status": "done"}
    result = _func(payload["func"])(payload["args"])
    store.finish_call(payload["call_id"], result)
    return {"call_id": payload["call_id"], "status": "done"}


def give_up_call(payload: dict, error_class: str, message: str) -> None:
    store_at(payload["db_path"]).finish_call(payload["call_id"], None, error_class or "infra", message)


def _run_here(store: Store, call: Call) -> dict:
    """Local executor: run it in this process; a failure is recorded on the row, then re-raised."""
    from envqa.core.policy import error_class_of

    try:
        result = _func(call.func)(call.args)
    except Exception as e:
        store.finish_call(call.call_id, None, getattr(e, "error_class", None) or error_class_of(e), str(e))
        raise
    store.finish_call(call.call_id, result)
    return result


def result_of(row: dict | None) -> dict:
    return json.loads(row["result_json"]) if row and row.get("result_json") else {}


def run_call(config: QAConfig, store: Store, executor, *, call_id: str, model: str, func: str, args: dict,
             deadline_sec: float = 3600.0) -> dict:
    """Run `func(args)` as a job on `model`'s queue and return its result; InfraError when it gave up (the
    local executor re-raises the call's own error)."""
    call = Call(call_id=call_id, model=model, func=func, args=args)
    if getattr(executor, "conn", None) is None:
        row = store.get_call(call_id)
        if row and row["status"] == "done":
            return result_of(row)
        store.mark_call_queued(call_id, queue_for_model(model))
        return _run_here(store, call)
    row = run_calls(config, store, executor, [call], deadline_sec=deadline_sec)[call_id]
    if row["status"] == "done":
        return result_of(row)
    if row["status"] == "failed":
        raise InfraError(f"{model}: call {call_id} gave up: {row['error_message']}", row["error_class"] or "infra")
    raise InfraError(f"{model}: call {call_id} did not finish within {deadline_sec:.0f}s", "timeout")


def run_calls(config: QAConfig, store: Store, executor, calls: list[Call], *, deadline_sec: float) -> dict[str, dict]:
    """Run every call (at once, each on its model's queue) and wait for them, at most `deadline_sec`.
    Returns {call_id: row}; a row's status is `done`, `failed` (error_class, error_message) or, for a call
    still open at the deadline, `queued`."""
    conn = getattr(executor, "conn", None)
    if conn is None:  # local executor: no queues, one after another here
        for call in calls:
            if store.mark_call_queued(call.call_id, queue_for_model(call.model)):
                try:
                    _run_here(store, call)
                except Exception as e:  # noqa: BLE001 - recorded on its row; the others still run
                    log.info("call.failed", call=call.call_id, error=str(e)[:300])
        return {c.call_id: store.get_call(c.call_id) for c in calls}
    from envqa.scheduler.jobs import JobEnvelope

    db_path = str(Path(config.db_path).resolve())
    envelopes = {c.call_id: JobEnvelope(
        job_id=c.call_id, queue=queue_for_model(c.model), func=f"{__name__}.call_job", on_give_up=f"{__name__}.give_up_call",
        payload={"call_id": c.call_id, "func": c.func, "args": c.args, "db_path": db_path},
        timeout_sec=config.scheduler.job_timeout_sec) for c in calls}
    rows = enqueue_and_follow(store, conn, envelopes, config.scheduler, end=time.monotonic() + deadline_sec)
    for call_id in set(envelopes) - set(rows):
        rows[call_id] = {**(store.get_call(call_id) or {}), "call_id": call_id, "status": "queued"}
    return rows


def enqueue_and_follow(store: Store, conn, envelopes: dict, settings, *, end: float = math.inf,
                       reconcile_sec: float = RECONCILE_SEC, poll_sec: float = 0.1,
                       tick: Callable[[], None] | None = None) -> dict[str, dict]:
    """Enqueue each job whose `calls` row is not queued or finished yet, then follow the rows until each is
    `done` or `failed` or the monotonic `end` passes; jobs still open are put back every `reconcile_sec`
    (Redis lost them in a restart). `tick` runs on every poll: the caller's liveness checks, which raise to
    end the wait. Returns {job_id: row} for the jobs that finished."""
    from envqa.scheduler.broker import Broker
    from envqa.scheduler.jobs import enqueue

    broker = Broker(conn, settings.lease_ttl_sec)
    for job_id, envelope in envelopes.items():
        if store.mark_call_queued(job_id, envelope.queue):
            enqueue(conn, broker, envelope, settings)
    rows: dict[str, dict] = {}
    open_ids = set(envelopes)
    last_reconcile = time.monotonic()
    while True:
        for job_id in sorted(open_ids):
            row = store.get_call(job_id)
            if row and row["status"] in ("done", "failed"):
                rows[job_id] = row
                open_ids.discard(job_id)
        if not open_ids or time.monotonic() >= end:
            return rows
        if tick is not None:
            tick()
        if time.monotonic() - last_reconcile > reconcile_sec:
            for job_id in open_ids:
                enqueue(conn, broker, envelopes[job_id], settings)
            last_reconcile = time.monotonic()
        time.sleep(poll_sec)


def results_of(store: Store, call_ids: list[str]) -> list[dict]:
    """The results of those of these calls that are done (e.g. to sum what they cost)."""
    return [result_of(row) for row in (store.get_call(c) for c in call_ids) if row and row["status"] == "done"]
