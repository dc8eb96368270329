"""Everything the scheduler takes from rq beyond its documented API, in one place.

`QAWorker` claims through our broker instead of popping queues, so it replaces one step of rq's work loop
(`dequeue_job_and_maintain_ttl`) and runs a job's bookkeeping itself (execution record, result, status,
registries). Those are rq internals: rq 3.0 changed `handle_job_success`'s signature and every worker
crash-looped. Keeping them here, listed in `REQUIRED`, means one file to port and one test
(tests/scheduler/test_rq_adapter.py) that fails on an rq release which no longer has them, before any
worker does. The key layout our Lua scripts share with rq (`rq:queue:<name>`, `rq:job:<id>`) is read from
rq's own class attributes, never spelled out elsewhere.
"""

from __future__ import annotations

import inspect
from contextlib import AbstractContextManager

from rq import Queue
from rq.job import Job, JobStatus
from rq.utils import now
from rq.worker import SimpleWorker

# rq's Redis key prefixes: the broker's Lua scripts LPOP/LPUSH rq's queue lists and check job hashes.
QUEUE_PREFIX: str = Queue.redis_queue_namespace_prefix
JOB_PREFIX: str = Job.redis_job_namespace_prefix

# (owner, attribute, parameters it must accept). The test checks each one; `uses()` lists them.
REQUIRED: list[tuple[type, str, tuple[str, ...]]] = [
    (SimpleWorker, "dequeue_job_and_maintain_ttl", ("timeout", "max_idle_time")),  # we override it
    (SimpleWorker, "execute_job", ("job", "queue")),  # we override it
    (SimpleWorker, "_install_signal_handlers", ()),  # we override it (SIGTERM = cold stop)
    (SimpleWorker, "request_stop", ("signum", "frame")),
    (SimpleWorker, "subscribe", ()),  # we override it with nothing (no pubsub thread)
    (SimpleWorker, "prepare_execution", ("job",)),
    (SimpleWorker, "prepare_job_execution", ("job",)),
    (SimpleWorker, "handle_job_success", ("job", "queue", "started_job_registry")),
    (SimpleWorker, "handle_job_failure", ("job", "queue", "started_job_registry", "exc_string")),
    (SimpleWorker, "cleanup_execution", ("job", "pipeline")),
    (SimpleWorker, "death_penalty_class", ()),
    (SimpleWorker, "set_state", ("state",)),
    (SimpleWorker, "heartbeat", ()),  # an idle worker's, every 10 s (QAWorker.dequeue_job_and_maintain_ttl)
    (Job, "perform", ()),
    (Job, "restore", ("raw_data",)),  # a job from the hash the claim script read (no second round trip)
    (Job, "set_status", ("status", "pipeline")),
    (Queue, "redis_queue_namespace_prefix", ()),
    (Job, "redis_job_namespace_prefix", ()),
]


def problems() -> list[str]:
    """What the installed rq lacks of `REQUIRED` (empty when it has everything)."""
    out = []
    for owner, name, params in REQUIRED:
        attr = getattr(owner, name, None)
        if attr is None:
            out.append(f"{owner.__name__}.{name} is gone")
            continue
        if not params:
            continue
        sig = inspect.signature(attr)
        have = list(sig.parameters)
        missing = [p for p in params if p not in have]
        if missing:
            out.append(f"{owner.__name__}.{name}{sig}: no parameter {', '.join(missing)}")
        required = [p.name for p in sig.parameters.values() if p.name != "self"
                    and p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        extra = [p for p in required if p not in params]
        if extra:  # rq 3's handle_job_success(..., execution) failed exactly like this
            out.append(f"{owner.__name__}.{name}{sig}: now requires {', '.join(extra)}")
    return out


def begin(worker: SimpleWorker, job: Job) -> None:
    """rq's execution record, registries and worker state for a job about to run in this process."""
    worker.prepare_execution(job)
    worker.prepare_job_execution(job)
    job.started_at = job.last_heartbeat


def job_from_hash(job_id: str, raw: dict[bytes, bytes], connection,
                  serializer=None) -> Job:
    """The job as `Job.fetch` would load it, from the hash the claim script already returned."""
    job = Job(job_id, connection=connection, serializer=serializer)
    job.restore(raw)
    return job


def time_limit(worker: SimpleWorker, seconds: int, exception: type[BaseException], job_id: str) -> AbstractContextManager:
    """rq's death penalty (SIGALRM): raises `exception` in the job after `seconds`."""
    return worker.death_penalty_class(seconds, exception, job_id=job_id)


def finish_success(worker: SimpleWorker, job: Job, queue: Queue, value) -> None:
    """Store the return value and move the job to rq's finished registry."""
    job._result = value
    job.ended_at = now()
    job._status = JobStatus.FINISHED
    worker.handle_job_success(job=job, queue=queue, started_job_registry=queue.started_job_registry)


def finish_failure(worker: SimpleWorker, job: Job, queue: Queue, exc_string: str) -> None:
    job.ended_at = now()
    worker.handle_job_failure(job=job, queue=queue, started_job_registry=queue.started_job_registry,
                              exc_string=exc_string)


def mark_failed(job: Job) -> None:
    """Last resort when rq's failure bookkeeping itself raised: at least its status says failed."""
    job.set_status(JobStatus.FAILED)


def mark_waiting(worker: SimpleWorker, job: Job, parked: bool) -> None:
    """The job goes back to our broker (parked queue or delayed retry): rq's view first, so that a fast
    re-claim by another worker is not overwritten by this one's late cleanup."""
    with worker.connection.pipeline() as p:
        job.set_status(JobStatus.QUEUED if parked else JobStatus.SCHEDULED, pipeline=p)
        worker.cleanup_execution(job, pipeline=p)
        p.execute()


def forget_execution(worker: SimpleWorker, job: Job) -> None:
    """This worker lost the job's lease: drop its own execution record, touch nothing else."""
    with worker.connection.pipeline() as p:
        worker.cleanup_execution(job, pipeline=p)
        p.execute()
