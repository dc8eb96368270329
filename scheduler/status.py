"""`qa queues`: what each queue holds right now, read straight from Redis."""

from __future__ import annotations

from datetime import datetime, timezone

from pydantic import BaseModel
from redis import Redis

from envqa.scheduler.broker import now_ms
from envqa.scheduler.queues import Keys


class QueueStatus(BaseModel):
    queue: str
    depth: int  # waiting to be claimed
    delayed: int  # waiting for a retry's backoff
    running: int  # live leases
    limit: int | None
    parked_until: datetime | None
    reclaimed: int  # jobs taken back from dead workers, ever


def queue_status(conn: Redis) -> list[QueueStatus]:
    names = sorted(m.decode() for m in conn.smembers(Keys.QUEUES))
    now = now_ms()
    with conn.pipeline() as p:
        for q in names:
            p.llen(Keys.queue(q))
            p.zcard(Keys.delayed(q))
            p.zcount(Keys.leases(q), now, "+inf")
            p.hget(Keys.LIMITS, q)
            p.get(Keys.parked(q))
            p.hget("envqa:reclaimed", q)
        raw = p.execute()
    out = []
    for i, q in enumerate(names):
        depth, delayed, running, limit, parked, reclaimed = raw[i * 6:(i + 1) * 6]
        until = datetime.fromtimestamp(int(parked) / 1000, tz=timezone.utc) if parked else None
        out.append(QueueStatus(queue=q, depth=depth, delayed=delayed, running=running,
                               limit=int(limit) if limit else None, parked_until=until,
                               reclaimed=int(reclaimed or 0)))
    return out
