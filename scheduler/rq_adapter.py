"""What the scheduler takes from rq, listed in one place with a test (tests/scheduler/test_rq_adapter.py) that
fails on an rq release which no longer has it, before any worker does.

Since issue 22 this is documented rq 3 API only: no worker internal is overridden and no private attribute is
touched (rq 3.0 changed `handle_job_success`'s signature and the old QAWorker, which drove it, crash-looped).
`REQUIRED` names every rq call the scheduler makes beyond enqueue/fetch: a RateLimit per queue, Retry with
intervals, a failure callback, returning Retry from a job (a park), the execution heartbeat the lease thread
renews, registry cleanup for abandoned jobs, and the worker options `qa worker` sets.

One thing here relies on rq 3's Redis layout rather than its API (issue 32 item 6): `requeue_unstarted`, which
puts back a job whose worker died before rq marked it STARTED (rq's own cleanup drops such a job). It is tested
against rq's real steps in tests/scheduler/test_dead_worker_windows.py, which also pins the rq behaviour it is for.
"""

from __future__ import annotations

import inspect

from redis import Redis
from rq import Callback, Queue, Retry, SimpleWorker, Worker
from rq.executions import Execution, ExecutionRegistry
from rq.job import Job
from rq.rate_limit import RateLimit, RateLimitRegistry
from rq.registry import StartedJobRegistry

from envqa.core.defaults import PUBSUB_RELEASE_SEC

# rq's Redis key prefixes, for tests that read rq's state raw (they are public class attributes).
QUEUE_PREFIX: str = Queue.redis_queue_namespace_prefix
JOB_PREFIX: str = Job.redis_job_namespace_prefix

# (owner, attribute, parameters it must accept). The test checks each one.
REQUIRED: list[tuple[type, str, tuple[str, ...]]] = [
    (
        Queue,
        "enqueue_call",
        (
            "func",
            "kwargs",
            "timeout",
            "result_ttl",
            "failure_ttl",
            "job_id",
            "meta",
            "retry",
            "on_failure",
            "rate_limit",
        ),
    ),
    (RateLimit, "__init__", ("key", "concurrency")),
    (RateLimitRegistry, "register", ("concurrency", "pipeline")),
    (RateLimitRegistry, "get_rate_limited_job_count", ()),
    (Retry, "__init__", ("max", "interval", "enqueue_at_front")),
    (Callback, "__init__", ("func",)),
    (Execution, "heartbeat", ("started_job_registry", "ttl", "pipeline")),
    (ExecutionRegistry, "get_executions", ()),
    (StartedJobRegistry, "cleanup", ()),
    (
        SimpleWorker,
        "__init__",
        ("queues", "name", "connection", "maintenance_interval", "job_monitoring_interval", "worker_ttl"),
    ),
    (SimpleWorker, "work", ("burst", "logging_level", "max_idle_time", "with_scheduler")),
    (Worker, "all", ("connection",)),
    (Job, "save_meta", ()),
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
        required = [
            p.name
            for p in sig.parameters.values()
            if p.name != "self"
            and p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        extra = [p for p in required if p not in params]
        if extra:  # rq 3's handle_job_success(..., execution) failed exactly like this
            out.append(f"{owner.__name__}.{name}{sig}: now requires {', '.join(extra)}")
    return out


def release_pubsub(worker: SimpleWorker, timeout: float = PUBSUB_RELEASE_SEC) -> bool:
    """End the pubsub thread rq's teardown leaves behind; True when no such thread is left.

    rq 3's `unsubscribe()` stops the thread and closes the connection, but redis-py's thread then sits in
    `subscribed_event.wait(60)` (no channel left, nothing to read), so each restarted work loop in one
    process would leave one more thread for up to a minute. Setting that event lets it see it was stopped.
    Uses the worker's public `pubsub`/`pubsub_thread` and redis-py's `PubSub.subscribed_event` and
    `PubSubWorkerThread.exception_handler`.
    """
    thread = getattr(worker, "pubsub_thread", None)
    if thread is None or not thread.is_alive():
        return True
    pubsub = getattr(worker, "pubsub", None)
    event = getattr(pubsub, "subscribed_event", None)
    if event is not None:
        # woken, it reads from the connection rq closed: that error is the expected end, not news
        thread.exception_handler = lambda exc, pubsub, thread: None
        event.set()
    thread.join(timeout=timeout)
    return not thread.is_alive()


# rq 3 registers a job's execution (StartedJobRegistry, with rq's own heartbeat of timeout + 60 s) in
# `prepare_execution`, and only a few round trips later marks the job STARTED and takes it off the queue's
# intermediate list (`prepare_job_execution`). A worker killed between the two leaves a QUEUED job whose only
# trace is that execution, and rq's `StartedJobRegistry.cleanup` skips any job not STARTED while it removes the
# entry: the job then sits in no queue (BLPOP, a worker on several queues) or in the intermediate list (BLMOVE,
# a worker on one queue; rq's own sweep retries it only after a minute). This script puts such a job back at
# the front of its queue, atomically, when the job is still QUEUED, no other live execution of it is in the
# StartedJobRegistry and it is not on its queue already. Relies on rq 3's key layout: the job hash's `status` field, the queue list and its
# `:intermediate` list, the StartedJobRegistry zset of `job_id:execution_id` and the per-job execution zset.
# KEYS: job hash, queue list, intermediate list, started registry, the job's execution registry
# ARGV: job id, composite key (job_id:execution_id), execution id, now (unix seconds)
_REQUEUE_UNSTARTED = """
if redis.call('HGET', KEYS[1], 'status') ~= 'queued' then return 0 end
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[3])
redis.call('LREM', KEYS[3], 0, ARGV[1])
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '(' .. ARGV[4], '+inf')) do
    if string.sub(member, 1, #ARGV[1] + 1) == ARGV[1] .. ':' then return 0 end
end
if redis.call('LPOS', KEYS[2], ARGV[1]) then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
"""


def requeue_unstarted(conn: Redis, queue: str, job_id: str, execution_id: str, now: float) -> bool:
    """A dead worker's execution of a job rq never marked STARTED: drop that execution and put the job back
    on its queue (see `_REQUEUE_UNSTARTED`); True when it was put back. The caller knows the worker is dead."""
    from rq.executions import ExecutionRegistry

    q = Queue(queue, connection=conn)
    keys = [
        Job.key_for(job_id),
        q.key,
        q.intermediate_queue_key,
        StartedJobRegistry(queue, connection=conn).key,
        ExecutionRegistry(job_id, connection=conn).key,
    ]
    script = conn.register_script(_REQUEUE_UNSTARTED)
    return bool(script(keys=keys, args=[job_id, f"{job_id}:{execution_id}", execution_id, now]))
