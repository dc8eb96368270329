"""A job as the store keeps it (`JobEnvelope`), enqueueing it idempotently, and reconciling after Redis
lost state.

The store is the source of truth: a trial's row holds the envelope from the moment it is queued, so when
Redis restarts empty, `reconcile` re-enqueues every trial the store calls queued or running that Redis no
longer holds. Job ids are trial ids, so enqueueing twice never makes two jobs.
"""

from __future__ import annotations

import structlog
from pydantic import BaseModel
from redis import Redis
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job

from envqa.core.config import SchedulerSettings
from envqa.core.models import TrialSpec
from envqa.scheduler.broker import Broker
from envqa.scheduler.queues import normalize_queue, queue_settings
from envqa.store.db import Store

log = structlog.get_logger(__name__)


class JobEnvelope(BaseModel):
    job_id: str
    queue: str
    func: str  # dotted path of the job function; called as func(payload=...)
    payload: dict
    on_give_up: str | None = None  # dotted path, called as hook(payload=, error_class=, message=)
    timeout_sec: int = 7200


def publish_settings(broker: Broker, settings: SchedulerSettings, queue: str) -> None:
    qs = queue_settings(settings, queue)
    broker.publish(queue, qs.concurrency or 1, qs.model_dump_json())


def enqueue(conn: Redis, broker: Broker, envelope: JobEnvelope, settings: SchedulerSettings) -> bool:
    """Put the job on its queue unless Redis already holds it; True when it was (re-)enqueued."""
    queue = normalize_queue(envelope.queue)
    qs = queue_settings(settings, queue)
    exists, held = broker.presence(queue, envelope.job_id, publish=(qs.concurrency or 1, qs.model_dump_json()))
    if held:
        return False
    if exists:  # a finished or failed copy from an earlier life: the store says it must run, so replace it
        try:
            Job.fetch(envelope.job_id, connection=conn).delete()
        except NoSuchJobError:
            pass
    Queue(queue, connection=conn).enqueue_call(
        envelope.func, kwargs={"payload": envelope.payload}, job_id=envelope.job_id,
        timeout=envelope.timeout_sec, result_ttl=3600, failure_ttl=7 * 86400,
        meta={"on_give_up": envelope.on_give_up} if envelope.on_give_up else None,
    )
    return True


def submit(store: Store, conn: Redis, broker: Broker, spec: TrialSpec, envelope: JobEnvelope,
           settings: SchedulerSettings) -> bool:
    """Record the trial as queued (store first), then enqueue; False when it is already done."""
    if not store.mark_trial_queued(spec.trial_id, spec.run_id, spec.env_version, spec.agent, spec.model,
                                   spec.purpose, envelope.model_dump_json()):
        return False
    enqueue(conn, broker, envelope, settings)
    return True


def reconcile(store: Store, conn: Redis, broker: Broker, settings: SchedulerSettings,
              run_id: str | None = None) -> list[str]:
    """Re-enqueue what the store says is queued/running but Redis no longer holds; returns their ids."""
    again = []
    for row in store.unfinished_trials(run_id):
        envelope = JobEnvelope.model_validate_json(row["spec_json"])
        if enqueue(conn, broker, envelope, settings):
            again.append(row["trial_id"])
    if again:
        log.warning("reconcile.requeued", count=len(again), trial_ids=again[:20])
    return again
