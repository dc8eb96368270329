"""Redis keys of the scheduler. rq 3 owns queues, jobs, registries and rate limits (`rq:` keys); the few keys
that are ours live under `envqa:` next to them, so one Redis can be shared. Queue names themselves are a domain
fact (envqa.core.queues) and re-exported here.
"""

from __future__ import annotations

from envqa.core.queues import (
    ANALYSIS_QUEUE,
    CONTROL_QUEUE,
    SANDBOX_QUEUE,
    SPECIAL_QUEUES,
    normalize_queue,
    queue_for_model,
    queue_settings,
)

__all__ = [
    "ANALYSIS_QUEUE",
    "CONTROL_QUEUE",
    "SANDBOX_QUEUE",
    "SPECIAL_QUEUES",
    "Keys",
    "normalize_queue",
    "queue_for_model",
    "queue_settings",
]


class Keys:
    """Our Redis keys; everything else is rq's."""

    QUEUES = "envqa:queues"  # set of queue names ever enqueued to (`qa worker --queues '*'`, `qa queues`)
    LIMITS = "envqa:limits"  # hash queue -> the concurrency its last enqueue gave its RateLimit (`qa queues`;
    # rq drops a RateLimit's own config when nothing holds or waits for a slot, e.g. while the queue is parked)
    RECLAIMED = "envqa:reclaimed"  # hash queue -> jobs rq took back from dead workers (AbandonedJobError), ever

    @staticmethod
    def parked(q: str) -> str:
        return f"envqa:parked:{q}"  # string: parked-until (ms), expires then (a 429's Retry-After)
