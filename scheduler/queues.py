"""Redis keys of the scheduler. Every key it owns lives under `envqa:` next to RQ's own `rq:` keys, so one Redis
can be shared. Queue names themselves are a domain fact (envqa.core.queues) and re-exported here.
"""

from __future__ import annotations

from envqa.core.queues import (ANALYSIS_QUEUE, CONTROL_QUEUE, SANDBOX_QUEUE, SPECIAL_QUEUES, normalize_queue,
                               queue_for_model, queue_settings)
from envqa.scheduler.rq_adapter import QUEUE_PREFIX

__all__ = ["ANALYSIS_QUEUE", "CONTROL_QUEUE", "SANDBOX_QUEUE", "SPECIAL_QUEUES", "Keys", "normalize_queue",
           "queue_for_model", "queue_settings"]


class Keys:
    """Redis keys. `queue` is RQ's list; the rest are ours."""

    QUEUES = "envqa:queues"  # set of queue names ever used
    LIMITS = "envqa:limits"  # hash queue -> concurrency limit (published by whoever enqueues)
    POLICY = "envqa:policy"  # hash queue -> QueueSettings JSON

    WORKERS = "envqa:workers"  # zset worker name -> last seen (ms): who is alive to claim
    WORKER_QUEUES = "envqa:worker_queues"  # hash worker name -> comma-separated queues it claims from ("*": all)

    @staticmethod
    def queue(q: str) -> str:
        return QUEUE_PREFIX + q  # rq's own list (rq_adapter reads the prefix from rq)

    @staticmethod
    def leases(q: str) -> str:
        return f"envqa:leases:{q}"  # zset "job_id|token" -> lease expiry (ms)

    @staticmethod
    def delayed(q: str) -> str:
        return f"envqa:delayed:{q}"  # zset job_id -> ready time (ms), for backoff

    @staticmethod
    def parked(q: str) -> str:
        return f"envqa:parked:{q}"  # string: parked-until (ms), expires then

    @staticmethod
    def counters(job_id: str) -> str:
        return f"envqa:job:{job_id}"  # hash: executions, failures, parks
