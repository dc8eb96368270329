"""Queue names and Redis keys: one queue per model (normalised `provider/model`), plus `sandbox` for work
that needs no model (oracle, nop, probes) and `analysis` for trace labelling.

Every key the scheduler owns lives under `envqa:` next to RQ's own `rq:` keys, so one Redis can be shared.
"""

from __future__ import annotations

import re

from envqa.core.config import QueueSettings, SchedulerSettings, builtin_queue_defaults
from envqa.scheduler.rq_adapter import QUEUE_PREFIX

SANDBOX_QUEUE = "sandbox"
ANALYSIS_QUEUE = "analysis"
CONTROL_QUEUE = "control"  # run graphs themselves (`qa run --detach`, continuations after an approval)
SPECIAL_QUEUES = (SANDBOX_QUEUE, ANALYSIS_QUEUE, CONTROL_QUEUE)
_MODEL = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._:@-]*$")


def normalize_queue(name: str) -> str:
    """`Anthropic / Claude-Sonnet-4-5 ` -> `anthropic/claude-sonnet-4-5`; raises ValueError on anything else.

    The same model written two ways must share one queue, or its concurrency limit would be split.
    """
    q = re.sub(r"\s+", "", name).lower()
    if q in SPECIAL_QUEUES:
        return q
    if not _MODEL.match(q):
        raise ValueError(f"queue {name!r} is neither 'sandbox', 'analysis', 'control' nor a 'provider/model' name")
    return q


def queue_for_model(model: str | None) -> str:
    return SANDBOX_QUEUE if not model else normalize_queue(model)


def queue_settings(settings: SchedulerSettings, queue: str) -> QueueSettings:
    """Effective settings of a queue: its own section over `[scheduler.defaults]`."""
    own = {SANDBOX_QUEUE: settings.sandbox, ANALYSIS_QUEUE: settings.analysis}.get(queue)
    if own is None:
        by_name = {normalize_queue(k): v for k, v in settings.models.items()}
        own = by_name.get(normalize_queue(queue), QueueSettings())
    merged = builtin_queue_defaults().model_dump()
    for layer in (settings.defaults, own):
        merged.update({k: v for k, v in layer.model_dump().items() if v is not None})
    return QueueSettings(**merged)


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
