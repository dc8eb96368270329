"""Leases, parking and delayed retries in Redis, each change one Lua script so that it is atomic.

A worker *claims* a job: in one step the script promotes due retries, hands expired leases' jobs back to
their queue (the worker that held them is dead or stuck), skips parked queues and queues at their limit,
pops a job and writes a lease `job_id|token` with an expiry. The worker renews the lease by heartbeat
while the job runs, and gives it back when the job ends (success, park, retry or failure). Because every
worker on every host goes through the same scripts, a limit holds across all of them, and a slot held by
a worker killed with -9 comes back once its lease expires.
"""

from __future__ import annotations

import time
import uuid

from pydantic import BaseModel, Field
from redis import Redis

from envqa.scheduler.queues import Keys
from envqa.scheduler.rq_adapter import JOB_PREFIX, QUEUE_PREFIX

CLAIM = """
local now = tonumber(ARGV[1])
local lease_ms = tonumber(ARGV[2])
local best, best_score = nil, -1
-- a queue with no measured run time yet is assumed to take the mean of those measured (1 s if none)
local known, sum = 0, 0
for _, v in ipairs(redis.call('HVALS', 'envqa:ewma')) do known, sum = known + 1, sum + tonumber(v) end
local unknown = known > 0 and sum / known or 1000
local queues = {}
for i = 5, #ARGV do queues[#queues + 1] = ARGV[i] end
if #queues == 1 and queues[1] == '*' then queues = redis.call('SMEMBERS', 'envqa:queues') end
for _, q in ipairs(queues) do
  local qk = '__RQ_QUEUE__' .. q
  local lk = 'envqa:leases:' .. q
  local dk = 'envqa:delayed:' .. q
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', dk, '-inf', now)) do
    redis.call('ZREM', dk, id)
    redis.call('RPUSH', qk, id)
  end
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', lk, '-inf', now)) do
    redis.call('ZREM', lk, m)
    local lost = string.match(m, '^(.*)|[^|]*$')
    redis.call('LPUSH', qk, lost)
    redis.call('HINCRBY', 'envqa:reclaimed', q, 1)
    -- the worker died or hung holding it: that run counts as an attempt, so max_attempts holds whatever
    -- keeps killing the worker (the claiming worker gives the job up once its failures reach the limit)
    redis.call('HINCRBY', 'envqa:job:' .. lost, 'failures', 1)
  end
  if redis.call('EXISTS', 'envqa:parked:' .. q) == 0 then
    local limit = tonumber(redis.call('HGET', 'envqa:limits', q) or ARGV[4])
    local running = redis.call('ZCARD', lk)
    local depth = redis.call('LLEN', qk)
    if running < limit and depth > 0 then
      -- the queue that would take longest to drain at its limit goes first: it is the critical path
      local rounds = math.ceil((depth + running) / limit)
      local score = rounds * (tonumber(redis.call('HGET', 'envqa:ewma', q)) or unknown)
      if score > best_score then best, best_score = q, score end
    end
  end
end
if not best then return false end
local id = redis.call('LPOP', '__RQ_QUEUE__' .. best)
while id and redis.call('EXISTS', '__RQ_JOB__' .. id) == 0 do id = redis.call('LPOP', '__RQ_QUEUE__' .. best) end
if not id then return false end
redis.call('ZADD', 'envqa:leases:' .. best, now + lease_ms, id .. '|' .. ARGV[3])
local ck = 'envqa:job:' .. id
local n = redis.call('HINCRBY', ck, 'executions', 1)
-- rq's job hash comes along: the worker builds the job from it instead of a second round trip
return {best, id, n, redis.call('HGET', ck, 'failures') or '0', redis.call('HGET', ck, 'parks') or '0',
        redis.call('HGETALL', '__RQ_JOB__' .. id)}
"""

RENEW = """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])
  return 1
end
return 0
"""

# KEYS: leases, queue, delayed, parked, counters.
# ARGV: member, job_id, action, ready/until ms (done: run time ms), now ms, queue.
# Only the lease's owner may put the job back: if the lease expired, the claim script already did.
FINISH = """
local owned = redis.call('ZREM', KEYS[1], ARGV[1])
local action = ARGV[3]
if action == 'park' then
  local until_ms = tonumber(ARGV[4])
  local cur = tonumber(redis.call('GET', KEYS[4]) or '0')
  if until_ms > cur and until_ms > tonumber(ARGV[5]) then
    redis.call('SET', KEYS[4], until_ms, 'PXAT', until_ms)
  end
  redis.call('HINCRBY', KEYS[5], 'parks', 1)
  if owned == 1 then redis.call('LPUSH', KEYS[2], ARGV[2]) end
elseif action == 'retry' then
  redis.call('HINCRBY', KEYS[5], 'failures', 1)
  if owned == 1 then redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2]) end
elseif action == 'requeue' then
  if owned == 1 then redis.call('LPUSH', KEYS[2], ARGV[2]) end
elseif action == 'done' then
  -- a worker that lost the lease must not wipe the counters of the run that took the job over
  if owned == 1 then redis.call('DEL', KEYS[5]) end
  local ms = tonumber(ARGV[4])
  if ms > 0 then
    local old = tonumber(redis.call('HGET', 'envqa:ewma', ARGV[6]) or ms)
    redis.call('HSET', 'envqa:ewma', ARGV[6], math.floor(0.8 * old + 0.2 * ms))
  end
end
return owned
"""


CLAIM = CLAIM.replace("__RQ_QUEUE__", QUEUE_PREFIX).replace("__RQ_JOB__", JOB_PREFIX)


class Claim(BaseModel):
    queue: str
    job_id: str
    token: str
    executions: int
    failures: int
    parks: int
    job_hash: dict[bytes, bytes] | None = Field(default=None, exclude=True, repr=False)  # rq's, at claim time

    @property
    def member(self) -> str:
        return f"{self.job_id}|{self.token}"


def now_ms() -> int:
    return int(time.time() * 1000)


class Broker:
    """The scheduler's Redis operations. One instance per process; scripts are loaded once."""

    def __init__(self, conn: Redis, lease_ttl_sec: float = 30.0):
        self.conn = conn
        self.lease_ms = int(lease_ttl_sec * 1000)
        self._claim = conn.register_script(CLAIM)
        self._renew = conn.register_script(RENEW)
        self._finish = conn.register_script(FINISH)

    def claim(self, queues: list[str], default_limit: int = 1) -> Claim | None:
        """`queues` may be ["*"]: every queue anyone has published, read inside the script (no stale list)."""
        token = uuid.uuid4().hex[:12]
        got = self._claim(args=[now_ms(), self.lease_ms, token, default_limit, *queues])
        if not got:
            return None
        q, job_id, n, failures, parks = (x.decode() if isinstance(x, bytes) else x for x in got[:5])
        flat = got[5] if len(got) > 5 else []
        return Claim(queue=q, job_id=job_id, token=token, executions=int(n), failures=int(failures),
                     parks=int(parks), job_hash=dict(zip(flat[::2], flat[1::2])) or None)

    def renew(self, claim: Claim) -> bool:
        """Extend the lease; False when it is gone (expired and reclaimed: stop treating the slot as ours)."""
        return bool(self._renew(keys=[Keys.leases(claim.queue)], args=[claim.member, now_ms() + self.lease_ms]))

    def _end(self, claim: Claim, action: str, at_ms: int = 0) -> bool:
        keys = [Keys.leases(claim.queue), Keys.queue(claim.queue), Keys.delayed(claim.queue),
                Keys.parked(claim.queue), Keys.counters(claim.job_id)]
        return bool(self._finish(keys=keys, args=[claim.member, claim.job_id, action, at_ms, now_ms(), claim.queue]))

    def done(self, claim: Claim, run_ms: int = 0) -> bool:
        """Give the slot back; `run_ms` feeds the queue's mean run time that orders claims."""
        return self._end(claim, "done", run_ms)

    def requeue(self, claim: Claim) -> bool:
        """Shutdown mid-job: the job goes back to the front of its queue, nothing spent."""
        return self._end(claim, "requeue")

    def park(self, claim: Claim, seconds: float) -> bool:
        """Park the claim's whole queue for `seconds` and put the job back at its front, no attempt spent."""
        return self._end(claim, "park", now_ms() + int(seconds * 1000))

    def retry_later(self, claim: Claim, seconds: float) -> bool:
        return self._end(claim, "retry", now_ms() + int(seconds * 1000))

    def give_up(self, claim: Claim) -> bool:
        return self._end(claim, "done")

    # queue settings travel through Redis, so workers on other hosts need no copy of qa.toml
    def publish(self, queue: str, concurrency: int, policy_json: str, pipeline=None) -> None:
        p = pipeline if pipeline is not None else self.conn.pipeline()
        p.sadd(Keys.QUEUES, queue)
        p.hset(Keys.LIMITS, queue, concurrency)
        p.hset(Keys.POLICY, queue, policy_json)
        if pipeline is None:
            p.execute()

    # who is alive to claim: `qa run` in Redis mode tells a stalled queue from a slow one by this
    def worker_seen(self, name: str, queues: list[str]) -> None:
        with self.conn.pipeline() as p:
            p.zadd(Keys.WORKERS, {name: now_ms()})
            p.hset(Keys.WORKER_QUEUES, name, ",".join(queues))
            p.execute()

    def worker_gone(self, name: str) -> None:
        with self.conn.pipeline() as p:
            p.zrem(Keys.WORKERS, name)
            p.hdel(Keys.WORKER_QUEUES, name)
            p.execute()

    def live_workers(self, silent_ms: int) -> dict[str, list[str]]:
        """Workers seen within `silent_ms`, with the queues each claims from."""
        names = [n.decode() for n in self.conn.zrangebyscore(Keys.WORKERS, now_ms() - silent_ms, "+inf")]
        if not names:
            return {}
        queues = self.conn.hmget(Keys.WORKER_QUEUES, names)
        return {n: (q.decode().split(",") if q else []) for n, q in zip(names, queues)}

    def waiting(self, queues: list[str]) -> dict[str, int]:
        """Jobs each queue holds (queued, delayed or leased)."""
        with self.conn.pipeline() as p:
            for q in queues:
                p.llen(Keys.queue(q))
                p.zcard(Keys.delayed(q))
                p.zcard(Keys.leases(q))
            raw = p.execute()
        return {q: sum(raw[i * 3:(i + 1) * 3]) for i, q in enumerate(queues)}

    def known_queues(self) -> list[str]:
        return sorted(m.decode() for m in self.conn.smembers(Keys.QUEUES))

    def holds(self, queue: str, job_id: str) -> bool:
        """Does Redis still know about this job (queued, leased or waiting for a retry)?"""
        return self.presence(queue, job_id)[1]

    def presence(self, queue: str, job_id: str, publish: tuple[int, str] | None = None) -> tuple[bool, bool]:
        """(the RQ job exists, the job is queued/leased/delayed); `publish` = (limit, policy JSON) is
        written in the same round trip: after a Redis restart it must be there again, so it is never cached."""
        with self.conn.pipeline() as p:
            p.exists(JOB_PREFIX + job_id)
            p.lpos(Keys.queue(queue), job_id)
            p.zscore(Keys.delayed(queue), job_id)
            p.zrangebyscore(Keys.leases(queue), "-inf", "+inf")
            if publish is not None:
                self.publish(queue, *publish, pipeline=p)
            exists, pos, delayed, leases = p.execute()[:4]
        if not exists:
            return False, False
        leased = any(m.decode().rsplit("|", 1)[0] == job_id for m in leases)
        return True, pos is not None or delayed is not None or leased
