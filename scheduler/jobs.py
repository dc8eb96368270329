"""A job as the store keeps it (`JobEnvelope`), enqueueing it idempotently, and reconciling after Redis
lost state.

The store is the source of truth: a trial's row holds the envelope from the moment it is queued, so when
Redis restarts empty, `reconcile` re-enqueues every trial the store calls queued or running that Redis no
longer holds. Job ids are trial ids, so enqueueing twice never makes two jobs. The enqueue itself is plain
rq 3 (envqa.scheduler.dispatch): RateLimit for the queue's concurrency, Retry for attempts.
"""

from __future__ import annotations

import structlog
from pydantic import BaseModel
from redis import Redis
from rq import Queue
from rq.registry import clean_registries

from envqa.core.config import SchedulerSettings
from envqa.core.defaults import JOB_TIMEOUT_SEC, MAINTENANCE_LOCK_SEC, STALE_LOCK_SEC
from envqa.core.models import TrialSpec
from envqa.scheduler.dispatch import enqueue_envelope
from envqa.scheduler.queues import normalize_queue
from envqa.store.db import Store

log = structlog.get_logger(__name__)


class JobEnvelope(BaseModel):
    job_id: str
    queue: str
    func: str  # dotted path of the job function; called as func(payload=...)
    payload: dict
    on_give_up: str | None = None  # dotted path, called as hook(payload=, error_class=, message=)
    timeout_sec: int = JOB_TIMEOUT_SEC


def enqueue(conn: Redis, envelope: JobEnvelope, settings: SchedulerSettings) -> bool:
    """Put the job on its queue unless Redis already holds it; True when it was (re-)enqueued."""
    return enqueue_envelope(conn, envelope, settings)


def submit(store: Store, conn: Redis, spec: TrialSpec, envelope: JobEnvelope, settings: SchedulerSettings) -> bool:
    """Record the trial as queued (store first), then enqueue; False when it is already done."""
    if not store.mark_trial_queued(
        spec.trial_id, spec.run_id, spec.env_version, spec.agent, spec.model, spec.purpose, envelope.model_dump_json()
    ):
        return False
    enqueue(conn, envelope, settings)
    return True


def recover_abandoned(conn: Redis, queues: set[str]) -> None:
    """rq's own registry maintenance for these queues (`clean_registries`): executions whose lease (heartbeat)
    ran out are failed with AbandonedJobError and retried through their Retry; leaked RateLimit slots are
    freed and waiting jobs promoted. It takes rq's per-queue maintenance lock, as a worker does; a lock older
    than STALE_LOCK_SEC belonged to a worker killed while cleaning (rq keeps it 15 minutes) and is broken."""
    for q in sorted(queues):
        queue = Queue(normalize_queue(q), connection=conn)
        try:
            left = conn.ttl(queue.registry_cleaning_key)
            if 0 < left < MAINTENANCE_LOCK_SEC - STALE_LOCK_SEC:
                log.warning("reconcile.stale_maintenance_lock", queue=q, age_sec=MAINTENANCE_LOCK_SEC - left)
                conn.delete(queue.registry_cleaning_key)
            if not queue.acquire_maintenance_lock():  # a worker is cleaning this queue right now
                continue
            try:
                clean_registries(queue)
            finally:
                queue.release_maintenance_lock()
        except Exception as e:  # noqa: BLE001 - a worker's maintenance does the same; try again next round
            log.warning("reconcile.cleanup_failed", queue=q, error=str(e))


def reconcile(store: Store, conn: Redis, settings: SchedulerSettings, run_id: str | None = None) -> list[str]:
    """Re-enqueue what the store says is queued/running but Redis no longer holds; returns their ids."""
    again = []
    for row in store.unfinished_trials(run_id):
        envelope = JobEnvelope.model_validate_json(row["spec_json"])
        if enqueue(conn, envelope, settings):
            again.append(row["trial_id"])
    if again:
        log.warning("reconcile.requeued", count=len(again), trial_ids=again[:20])
    return again
