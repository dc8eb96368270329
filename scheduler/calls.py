"""Model calls that are not trials (reviser, generator, trace analyst) as jobs on the model's own queue.

Such a call must obey the same limits as the solver's trials on that model: its concurrency, its parking
on a 429, its retries. So on Redis it is enqueued like a trial (job id = call id, queue = the model's
queue) and the caller follows its row in the store's `calls` table; the job re-raises provider errors so
the worker's policy parks or retries, and a job that gives up marks its row `failed` with the error class.
The row is the truth: a call already `done` is never run again, and a `queued` call Redis lost (a restart)
is enqueued again while the caller waits. With the local executor the calls run in this process.

The executor's `run_call`/`run_calls` and `run_probe_jobs` (envqa.scheduler.rq_executor) build on
`enqueue_and_follow` here, which waits in the one follow loop (envqa.scheduler.follow) trials use too: the
same stall check and watchdog, and a deadline. The call's body is envqa.app.jobs.call_job.
"""

from __future__ import annotations

from pathlib import Path

import structlog

from envqa.core.config import QAConfig
from envqa.core.defaults import FOLLOW_POLL_SEC, RECONCILE_SEC
from envqa.core.executor import CALL_BODY, CALL_GIVE_UP, Call
from envqa.core.queues import queue_for_model
from envqa.core.statuses import FINAL_CALL
from envqa.scheduler.follow import Liveness, follow
from envqa.scheduler.jobs import JobEnvelope, enqueue, recover_abandoned
from envqa.scheduler.payloads import by_reference
from envqa.store.db import Store

log = structlog.get_logger(__name__)


def call_envelopes(config: QAConfig, calls: list[Call], store: Store) -> dict[str, JobEnvelope]:
    """Each call as a job on its model's queue (job id = call id); the body stores the result in `calls`. A
    config in the call's arguments travels by hash (scheduler/payloads.py)."""
    db_path = str(Path(config.db_path).resolve())
    return {
        c.call_id: JobEnvelope(
            job_id=c.call_id,
            queue=queue_for_model(c.model),
            func=CALL_BODY,
            on_give_up=CALL_GIVE_UP,
            payload=by_reference(store, {"call_id": c.call_id, "func": c.func, "args": c.args}, db_path),
            timeout_sec=config.scheduler.job_timeout_sec,
        )
        for c in calls
    }


def enqueue_and_follow(
    store: Store,
    conn,
    envelopes: dict,
    settings,
    liveness: Liveness,
    *,
    deadline: float,
    reconcile_sec: float = RECONCILE_SEC,
    poll_sec: float = FOLLOW_POLL_SEC,
) -> dict[str, dict]:
    """Enqueue each job whose `calls` row is not queued or finished yet, then follow the rows
    (envqa.scheduler.follow: liveness, reconcile) until each is `done` or `failed` or the monotonic `deadline`
    passes; jobs still open are put back every `reconcile_sec` (Redis lost them in a restart). Returns
    {job_id: row} for the jobs that finished."""
    for job_id, envelope in envelopes.items():
        if store.mark_call_queued(job_id, envelope.queue):
            enqueue(conn, envelope, settings)
    rows: dict[str, dict] = {}
    open_ids = set(envelopes)

    def step() -> set[str]:
        for job_id in sorted(open_ids):
            row = store.get_call(job_id)
            if row and row["status"] in FINAL_CALL:
                rows[job_id] = row
                open_ids.discard(job_id)
        return {envelopes[j].queue for j in open_ids}

    def put_back(queues: set[str]) -> None:
        recover_abandoned(conn, queues)
        for job_id in sorted(open_ids):
            enqueue(conn, envelopes[job_id], settings)

    follow(step, put_back, liveness, deadline=deadline, poll_sec=poll_sec, reconcile_sec=reconcile_sec)
    return rows
