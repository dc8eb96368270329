"""`qa queues`: what each queue holds right now, read from rq's own registries (and our parked key)."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel
from redis import Redis
from rq import Queue
from rq.rate_limit import RateLimitRegistry

from envqa.scheduler.dispatch import rate_limit_key
from envqa.scheduler.queues import Keys


class QueueStatus(BaseModel):
    queue: str
    depth: int  # waiting: on rq's queue, or held back by its RateLimit
    delayed: int  # in rq's ScheduledJobRegistry: a retry's backoff, or parked
    running: int  # in rq's StartedJobRegistry
    limit: int | None  # the RateLimit's concurrency
    parked_until: datetime | None
    reclaimed: int  # jobs rq took back from dead workers, ever


def held(conn: Redis, queue: str) -> int:
    """Jobs of the queue Redis still has to run (waiting, held back, scheduled or running)."""
    q = Queue(queue, connection=conn)
    limited = RateLimitRegistry(rate_limit_key(queue), connection=conn).get_rate_limited_job_count()
    return q.count + limited + q.scheduled_job_registry.count + q.started_job_registry.count


def queue_status(conn: Redis) -> list[QueueStatus]:
    out = []
    for name in sorted(m.decode() for m in conn.smembers(Keys.QUEUES)):
        q = Queue(name, connection=conn)
        rl = RateLimitRegistry(rate_limit_key(name), connection=conn)
        parked = conn.get(Keys.parked(name))
        reclaimed = conn.hget(Keys.RECLAIMED, name)
        limit = rl.concurrency or int(conn.hget(Keys.LIMITS, name) or 0)
        out.append(
            QueueStatus(
                queue=name,
                depth=q.count + rl.get_rate_limited_job_count(),
                delayed=q.scheduled_job_registry.count,
                running=q.started_job_registry.count,
                limit=limit or None,
                parked_until=datetime.fromtimestamp(int(parked) / 1000, tz=UTC) if parked else None,
                reclaimed=int(reclaimed or 0),
            )
        )
    return out
