"""Our jobs on stock rq 3: how one is enqueued, and the function every rq worker runs for it.

Enqueue (`enqueue_envelope`): plain `Queue.enqueue` with rq's own `RateLimit` (the queue's concurrency, held
across every worker on every host), rq's own `Retry(max, interval)` (transient failures and abandoned jobs,
with our backoff as the intervals), and an `on_failure` callback that records the give-up in the store. The
queue's policy travels in `job.meta`, so a worker needs no qa.toml.

Run (`run_envelope`, what any rq worker calls, `rq worker` and `rq worker-pool` included):
- the queue is parked (a 429 said so): return `Retry(interval=rest of the park)`. rq schedules the job again
  and frees its RateLimit slot; returning a Retry counts in rq's `number_of_retries`, never in the
  `retries_left` that bounds attempts, so parking spends no attempt. Other queues are not touched. A job back
  with under PARK_SETTLE_SEC of the park left (rq brings a scheduled job back up to a second early) waits it out
  in place.
- the body raises a rate limit: park the queue (`envqa:parked:<queue>`, only ever moved later), then as above.
- a transient error: re-raise; rq's Retry schedules the next attempt after its backoff.
- a permanent error (or the attempts are spent): `retries_left = 0` and re-raise; rq fails the job and
  `on_failure` records it (the job's give-up hook: a trial as infra with its class).
- while the body runs, the process's beat thread (envqa.scheduler.lease) keeps rq's execution heartbeat at
  `lease_ttl_sec` (instead of rq's own timeout + 60 s), and a watched worker that stops beating (killed even
  before its job reached us) has its executions expired: a worker killed with -9 loses its job after the lease; rq's
  `StartedJobRegistry.cleanup` (worker maintenance, or the follower's reconcile) fails it with
  AbandonedJobError and retries it through the same Retry; after max_attempts it ends `worker_lost`.
"""

from __future__ import annotations

import math
import signal
import threading
import time
import traceback
from contextvars import ContextVar

import structlog
from redis import Redis
from rq import Callback, Queue, Retry, get_current_job
from rq.exceptions import AbandonedJobError, NoSuchJobError
from rq.job import Job, JobStatus
from rq.rate_limit import RateLimit
from rq.utils import import_attribute

from envqa.core.config import QueueSettings, SchedulerSettings
from envqa.core.defaults import (
    JOB_FAILURE_TTL_SEC,
    JOB_RESULT_TTL_SEC,
    LOST_RECHECK_SEC,
    LOST_SEEN_TTL_SEC,
    PARK_REDIRECTS,
    PARK_SETTLE_SEC,
)
from envqa.core.policy import Action, backoff, decide
from envqa.scheduler.lease import BEATER, Lease, LeaseLost
from envqa.scheduler.queues import Keys, normalize_queue, queue_settings

log = structlog.get_logger(__name__)

RUN = "envqa.scheduler.dispatch.run_envelope"
ON_FAILURE = "envqa.scheduler.dispatch.on_failure"
# rq statuses under which Redis still holds the job to run (enqueueing it again would make a second copy)
HELD = {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED, JobStatus.RATE_LIMITED}
_ATTEMPT: ContextVar[int] = ContextVar("envqa_attempt", default=0)
RETURNED = "returned"  # job.meta key, in memory only: the body of this run returned


_LEASE: ContextVar[Lease | None] = ContextVar("envqa_lease", default=None)


def on_beat(hook) -> None:
    """Run `hook()` on every lease beat of the job running now (its health in the store, say); outside a job,
    nothing."""
    lease = _LEASE.get()
    if lease is not None:
        lease.hooks.append(hook)


def current_attempt() -> int:
    """The running job's execution number (1 = first run; parks and retries each add one)."""
    return _ATTEMPT.get() or 1


def rate_limit_key(queue: str) -> str:
    return f"envqa:{queue}"


def enqueue_envelope(conn: Redis, envelope, settings: SchedulerSettings) -> bool:
    """Put the job on its queue unless Redis already holds it (queued, running, scheduled or waiting for a
    RateLimit slot); True when it was (re-)enqueued. A finished or failed copy from an earlier life is
    replaced: the store, not Redis, said it must run."""
    queue = normalize_queue(envelope.queue)
    try:
        old = Job.fetch(envelope.job_id, connection=conn)
        if old.get_status() in HELD and not _lost_in_dequeue(conn, old):
            return False
        old.delete()
    except NoSuchJobError:
        pass
    qs = queue_settings(settings, queue)
    attempts = qs.max_attempts or 1
    retry = (
        Retry(max=attempts - 1, interval=[round(backoff(i, qs), 3) for i in range(1, attempts)])
        if attempts > 1
        else None
    )
    with conn.pipeline() as p:
        p.sadd(Keys.QUEUES, queue)
        p.hset(Keys.LIMITS, queue, qs.concurrency or 1)
        p.execute()
    Queue(queue, connection=conn).enqueue_call(
        RUN,
        kwargs={"envelope": envelope.model_dump(mode="json")},
        job_id=envelope.job_id,
        timeout=envelope.timeout_sec,
        result_ttl=JOB_RESULT_TTL_SEC,
        failure_ttl=JOB_FAILURE_TTL_SEC,
        retry=retry,
        rate_limit=RateLimit(rate_limit_key(queue), qs.concurrency or 1),
        on_failure=Callback(ON_FAILURE),
        meta={"policy": qs.model_dump(mode="json"), "lease_ttl": settings.lease_ttl_sec},
    )
    return True


def _lost_in_dequeue(conn: Redis, job: Job) -> bool:
    """rq pops a job off its queue (BLPOP, a worker on several queues) before it marks it started: a worker
    killed in between leaves it QUEUED in no queue, holding its RateLimit slot, forever (chaos: 1 in 1,000).
    Lost when seen that way by two calls (the follower's reconcile rounds) at least LOST_RECHECK_SEC apart: a
    live worker starts what it popped within milliseconds. No waiting here: the first sighting is a key."""
    queue = Queue(job.origin, connection=conn)
    gone = (
        job.get_status(refresh=True) == JobStatus.QUEUED
        and conn.lpos(queue.key, job.id) is None
        and conn.lpos(queue.intermediate_queue_key, job.id) is None
    )
    seen_key = f"envqa:lost-seen:{job.id}"
    if not gone:
        return False
    now = time.time()
    first = conn.set(seen_key, now, nx=True, ex=LOST_SEEN_TTL_SEC, get=True)
    if first is None or now - float(first) < LOST_RECHECK_SEC:
        return False
    conn.delete(seen_key)
    log.warning(
        "job.lost_in_dequeue",
        job_id=job.id,
        queue=job.origin,
        detail="queued in no queue (its worker died between rq's pop and its start): enqueued again",
    )
    return True


def parked_until(conn: Redis, queue: str) -> float:
    """When the queue's park ends, in Unix seconds (0.0 when it is not parked)."""
    raw = conn.get(Keys.parked(queue))
    return int(raw) / 1000 if raw else 0.0


def park_left(conn: Redis, queue: str) -> float:
    """When the queue's park ends (Unix seconds) if more than PARK_SETTLE_SEC of it is left; else 0.0, after
    waiting out the rest in place (rq brings a parked job back up to a second early: see `back_at_park_end`).
    A park moved later meanwhile (another 429) is seen on the re-read."""
    until = parked_until(conn, queue)
    while 0 < until - time.time() <= PARK_SETTLE_SEC:
        time.sleep(until - time.time())
        until = parked_until(conn, queue)
    return until if until > time.time() else 0.0


def back_at_park_end(until: float) -> Retry:
    """The Retry that brings a job of a queue parked until `until` (Unix seconds) back when the park ends. rq
    takes whole seconds, truncates the due time to whole seconds and polls once a second: a job due at the last
    whole second at or before the end comes back within a second either side of it and waits out the rest in
    place (park_left). Rounding the rest of the park up instead made it due a whole second after the end about
    as often as not. A parked job spends no attempt (PARK_REDIRECTS)."""
    interval = max(1, math.floor(until) - math.floor(time.time()))
    return Retry(max=PARK_REDIRECTS, interval=interval, enqueue_at_front=True)


def park(conn: Redis, queue: str, seconds: float) -> float:
    """Park the queue until now + seconds, never earlier than it already is (two 429s: the later wins); returns
    when the park ends now (Unix seconds)."""
    until = int((time.time() + seconds) * 1000)
    with conn.pipeline() as p:  # set it if absent, else move it only later; PXAT lets the key vanish then
        p.set(Keys.parked(queue), until, pxat=until, nx=True)
        p.get(Keys.parked(queue))
        _, current = p.execute()
    if current is not None and int(current) < until:
        conn.set(Keys.parked(queue), until, pxat=until)
    return max(until, int(current or 0)) / 1000


class WorkerStopping(BaseException):
    """SIGTERM reached the worker while our job ran: a BaseException, so the job's own catch-alls let it pass."""


class _StopOnSigterm:
    """While the job runs in a worker's main thread, SIGTERM stops the job now (rq's own handler would wait for
    it: a trial can run for an hour) and is passed on to rq's handler, so the worker stops after handing the job
    back. Elsewhere (a thread, a forked horse with default handling) it changes nothing."""

    def __enter__(self) -> _StopOnSigterm:
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.getsignal(signal.SIGTERM)
            signal.signal(signal.SIGTERM, self._stop)
        return self

    def _stop(self, signum, frame):
        signal.signal(signal.SIGTERM, self.previous or signal.SIG_DFL)
        if callable(self.previous):
            try:
                self.previous(signum, frame)  # rq: stop the work loop after this job
            except BaseException:  # noqa: BLE001 - rq raising its own stop here: ours comes next anyway
                pass
        raise WorkerStopping()

    def __exit__(self, *exc) -> None:
        if self.previous is not None and signal.getsignal(signal.SIGTERM) == self._stop:
            signal.signal(signal.SIGTERM, self.previous)


def run_envelope(envelope: dict):
    """What rq runs for each of our jobs (see the module docstring)."""
    job = get_current_job()
    lease = BEATER.begin(job, float(job.meta.get("lease_ttl") or 30))  # first: no I/O; the beat thread renews
    try:
        return _run(job, envelope, lease)
    finally:
        BEATER.end(lease)


def _run(job: Job, envelope: dict, lease: Lease):
    queue, func = envelope["queue"], envelope["func"]
    policy = QueueSettings.model_validate(job.meta.get("policy") or {})
    job.meta["executions"] = int(job.meta.get("executions", 0)) + 1
    job.meta.pop(RETURNED, None)
    job.save_meta()
    until = park_left(job.connection, queue)
    if until:  # another job of this queue hit the provider's limit: come back when the park ends
        return back_at_park_end(until)
    token = _ATTEMPT.set(job.meta["executions"])
    try:
        with _StopOnSigterm():
            lease_token = _LEASE.set(lease)
            try:
                value = import_attribute(func)(payload=envelope["payload"])
            finally:
                _LEASE.reset(lease_token)
        job.meta[RETURNED] = True  # in memory: a failure after this is rq's own bookkeeping (on_failure)
        return value
    except LeaseLost:  # another worker may run it now: stop, record nothing; rq's copy comes back later
        # as a no-op (the store says done) if the other run finished, or runs then if it did not
        wait = max(5, 3 * math.ceil(float(job.meta.get("lease_ttl") or 30)))
        return Retry(max=PARK_REDIRECTS, interval=wait)
    except WorkerStopping:  # SIGTERM mid-job: hand it back at the front, no attempt spent; the worker stops
        log.warning("job.handed_back", job_id=job.id, queue=queue, reason="the worker is stopping (SIGTERM)")
        return Retry(max=PARK_REDIRECTS, interval=0, enqueue_at_front=True)
    except Exception as exc:
        parks = int(job.meta.get("parks", 0))
        left = job.retries_left if isinstance(job.retries_left, int) else 0
        failures = (policy.max_attempts or 1) - 1 - left
        decision = decide(exc, failures, parks, policy)
        log.info(
            "job.failed",
            job_id=job.id,
            queue=queue,
            action=decision.action,
            error_class=decision.error_class,
            delay=round(decision.delay_sec, 3),
            error=str(exc)[:200],
        )
        if decision.action == Action.PARK:
            until = park(job.connection, queue, decision.delay_sec)
            job.meta["parks"] = parks + 1
            job.save_meta()
            return back_at_park_end(until)
        if decision.action == Action.FAIL:
            job.meta["give_up"] = {"error_class": decision.error_class, "message": f"{decision.reason}: {exc}"}
            job.save_meta()
            job.retries_left = 0  # rq's Retry must not run it again: the failure callback records it
        raise
    finally:
        _ATTEMPT.reset(token)


def on_failure(job: Job, connection: Redis, exc_type, value, tb) -> None:
    """rq's failure callback: on the job's last failure (no retries left), record it through its give-up
    hook. rq calls it for a raised error (in the worker) and for an abandoned job (in registry cleanup)."""
    abandoned = exc_type is AbandonedJobError or isinstance(value, AbandonedJobError)
    if abandoned:
        connection.hincrby(Keys.RECLAIMED, job.origin, 1)
    elif job.meta.get(RETURNED):
        # The body returned (and recorded its outcome); rq's success bookkeeping raised. Running it again
        # would only hand rq the same job to choke on: rq fails it now, and the store already has the truth.
        log.error(
            "job.bookkeeping_failed",
            job_id=job.id,
            queue=job.origin,
            stage="success",
            error=f"{getattr(exc_type, '__name__', exc_type)}: {value}",
        )
        job.retries_left = 0
        return
    if job.retries_left:
        return
    envelope = job.kwargs.get("envelope") or {}
    hook = envelope.get("on_give_up")
    given = job.meta.get("give_up") if not abandoned else None
    if given:
        error_class, message = given["error_class"], given["message"]
    elif abandoned:
        runs = int(job.meta.get("executions", 0)) or ((job.meta.get("policy") or {}).get("max_attempts") or 1)
        error_class = "worker_lost"
        message = f"gave up after {runs} attempts: each ended with its worker dead, hung or out of its lease"
    else:
        policy = QueueSettings.model_validate(job.meta.get("policy") or {})
        decision = decide(value, (policy.max_attempts or 1) - 1, int(job.meta.get("parks", 0)), policy)
        error_class, message = decision.error_class, f"{decision.reason}: {value}"
    log.warning("job.gave_up", job_id=job.id, queue=job.origin, error_class=error_class, message=message[:200])
    if hook:
        try:
            import_attribute(hook)(payload=envelope.get("payload"), error_class=error_class, message=message)
        except Exception as e:  # noqa: BLE001 - the store stays unfinished: the follower's reconcile runs it again
            log.error(
                "job.give_up_hook_failed",
                job_id=job.id,
                hook=hook,
                error=str(e),
                traceback=traceback.format_exc(limit=3),
            )


def set_limit(conn: Redis, settings: SchedulerSettings, queue: str) -> None:
    """Write the queue's concurrency into rq's RateLimit registry now (`qa worker --limit`); each enqueue
    states its own limit again."""
    from rq.rate_limit import RateLimitRegistry

    qs = queue_settings(settings, queue)
    with conn.pipeline() as p:
        RateLimitRegistry(rate_limit_key(queue), connection=conn).register(qs.concurrency or 1, p)
        p.hset(Keys.LIMITS, queue, qs.concurrency or 1)
        p.execute()
