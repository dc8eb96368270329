"""`qa worker`: an RQ worker that claims through the broker instead of popping queues blindly.

It claims only from queues with a free slot that are not parked, so it never holds a job it cannot start.
While a job runs, a heartbeat thread renews its lease. When the job raises, the retry policy decides:
park the model's queue (rate limit; the job goes back to the front, no attempt spent), retry later with
backoff, or give up (the job's `on_give_up` hook records the failure, e.g. an infra trial result). A
SIGTERM stops the worker at once and puts its job back; SIGINT waits for the job, as in RQ.

Liveness: bookkeeping that raises fails the job with that error (it is never handed back unchanged, to
crash the next worker the same way); a lost lease interrupts the job (another worker owns it now); a job
that keeps killing its worker runs out of attempts; a work loop that keeps failing restarts with backoff
and then exits non-zero. rq internals go through `rq_adapter`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import traceback
from collections import deque
from contextvars import ContextVar

import structlog
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.utils import import_attribute
from rq.worker import SimpleWorker, WorkerStatus

from envqa.core.config import QueueSettings, SchedulerSettings
from envqa.core.errors import InfraError, RunCancelled
from envqa.scheduler import rq_adapter
from envqa.scheduler.broker import Broker, Claim
from envqa.core.policy import Action, decide
from envqa.scheduler.queues import Keys, queue_settings

log = structlog.get_logger(__name__)

ALL_QUEUES = "*"
SEEN_EVERY_SEC = 2.0  # how often an idle worker says it is alive (Keys.WORKERS)
RESTART_BACKOFF_MAX_SEC = 5.0
LEASE_LOST_SIGNAL = signal.SIGUSR2
# The claim a job is running under; jobs read it (attempt numbers) through `current_claim()`.
_CURRENT: ContextVar[Claim | None] = ContextVar("envqa_claim", default=None)


def current_claim() -> Claim | None:
    return _CURRENT.get()


class JobTimedOut(BaseException):
    """The job outran its timeout. A BaseException so that a trial's catch-all (which records an agent
    error) cannot swallow it: the worker turns it into a `job_timeout` failure for the retry policy."""


class LeaseLost(BaseException):
    """This worker's lease on the running job expired and another worker took the job over: stop now, so
    the trial is recorded once and the model is not paid twice."""


class WorkerCrashLoop(InfraError):
    def __init__(self, restarts: int, window: float, reason: str):
        super().__init__(f"the worker loop failed {restarts} times within {window:g}s (last: {reason}); "
                         "giving up", "worker_crash_loop")


SHUTDOWN = (SystemExit, KeyboardInterrupt, RunCancelled)


class QAWorker(SimpleWorker):
    def __init__(self, queues: list[str], connection: Redis, settings: SchedulerSettings | None = None, **kw):
        self.settings = settings or SchedulerSettings()
        self.wanted = queues or [ALL_QUEUES]
        placeholder = [q for q in self.wanted if q != ALL_QUEUES] or ["sandbox"]
        super().__init__([Queue(q, connection=connection) for q in placeholder], connection=connection, **kw)
        self.broker = Broker(connection, self.settings.lease_ttl_sec)
        self.stop_requested = False
        self._claim: Claim | None = None
        self._policies: dict[str, tuple[float, QueueSettings]] = {}
        self._rq_queues: dict[str, Queue] = {}
        self._running: Claim | None = None
        self._lost: Claim | None = None
        self._performing = False
        self._last_seen = 0.0
        self._last_beat = 0.0  # rq's worker heartbeat while idle: every 10 s, not on every claim
        self._beat: threading.Thread | None = None
        self._closed = threading.Event()

    # which queues, which policy -------------------------------------------------------------------
    def _queue_names(self) -> list[str]:
        """The queues to claim from; ["*"] is resolved by the claim script itself, never cached stale."""
        return [ALL_QUEUES] if ALL_QUEUES in self.wanted else self.wanted

    def _policy(self, queue: str) -> QueueSettings:
        at, pol = self._policies.get(queue, (0.0, None))
        if pol is None or time.monotonic() - at > 5.0:
            raw = self.connection.hget(Keys.POLICY, queue)
            pol = QueueSettings.model_validate_json(raw) if raw else queue_settings(self.settings, queue)
            self._policies[queue] = (time.monotonic(), pol)
        return pol

    # claiming (replaces rq's dequeue step) --------------------------------------------------------
    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        """Claim the next job. Between two jobs this sits on the critical path (the slot the last job freed
        waits for it), so it spends no round trip on rq's bookkeeping that is already done: execute_job
        leaves the worker IDLE and rq's loop heartbeats after every job; here only the first call sets the
        state, and an idle worker heartbeats every 10 s."""
        idle_since = time.monotonic()
        default_limit = self.settings.defaults.concurrency or 1
        while True:
            try:
                if self._last_beat == 0.0:
                    self.set_state(WorkerStatus.IDLE)
                if time.monotonic() - self._last_beat > 10:
                    self.heartbeat()
                    self._last_beat = time.monotonic()
                if time.monotonic() - self._last_seen > SEEN_EVERY_SEC:  # not per job: dispatch stays cheap
                    self.broker.worker_seen(self.name, self.wanted)
                    self._last_seen = time.monotonic()
                names = self._queue_names()
                claim = self.broker.claim(names, default_limit) if names else None
            except RedisConnectionError as e:  # Redis restarting: wait for it; reconcile restores the jobs
                log.warning("redis.unreachable", error=str(e))
                time.sleep(1.0)
                continue
            if claim is not None:
                try:
                    if claim.job_hash:
                        job = rq_adapter.job_from_hash(claim.job_id, claim.job_hash, self.connection, self.serializer)
                    else:
                        job = self.job_class.fetch(claim.job_id, connection=self.connection, serializer=self.serializer)
                except NoSuchJobError:
                    self.broker.give_up(claim)
                    continue
                if claim.queue not in self._rq_queues:
                    self._rq_queues[claim.queue] = Queue(claim.queue, connection=self.connection,
                                                         serializer=self.serializer)
                queue = self._rq_queues[claim.queue]
                limit = self._policy(claim.queue).max_attempts or 1
                if claim.failures >= limit:  # killed, hung or crashed that often: do not run it again
                    self._give_up(job, queue, claim, "worker_lost", f"gave up after {claim.failures} attempts: "
                                  "each ended with its worker dead, hung or out of its lease", "")
                    continue
                self._claim = claim
                return job, queue
            if timeout is None and self._nothing_left(names):  # burst mode: stop when nothing can come
                return None
            if max_idle_time is not None and time.monotonic() - idle_since > max_idle_time:
                return None
            time.sleep(self.settings.poll_interval_sec)

    def _nothing_left(self, names: list[str]) -> bool:
        if ALL_QUEUES in names:
            names = self.broker.known_queues()
        return not any(self.broker.waiting(names).values())

    # running --------------------------------------------------------------------------------------
    def execute_job(self, job: Job, queue: Queue):
        claim, self._claim = self._claim, None
        assert claim is not None
        self._ensure_heartbeat()
        self._running = claim
        token = _CURRENT.set(claim)
        try:
            self._run(job, queue, claim)
        except LeaseLost:
            log.warning("job.lease_lost", job_id=job.id, queue=claim.queue,
                        detail="another worker runs it now; this run stopped before recording anything")
            try:
                rq_adapter.forget_execution(self, job)
            except Exception as e:  # noqa: BLE001 - rq's record of this run only; the job is safe elsewhere
                log.warning("job.forget_failed", job_id=job.id, error=str(e))
        except BaseException as exc:
            if isinstance(exc, SHUTDOWN):  # stopped mid-job: hand the job back untouched
                self.broker.requeue(claim)
            else:  # the worker itself is going down on this job: that run counts as an attempt
                self.broker.retry_later(claim, 0)
            raise
        finally:
            _CURRENT.reset(token)
            self._running = self._lost = None
            try:
                self.set_state(WorkerStatus.IDLE)
            except RedisConnectionError:
                pass

    def _run(self, job: Job, queue: Queue, claim: Claim) -> None:
        started = time.monotonic()
        seconds = job.timeout or self.settings.job_timeout_sec
        try:
            rq_adapter.begin(self, job)
            self._performing = True
            try:
                if self._lost is claim:
                    raise LeaseLost()
                with rq_adapter.time_limit(self, seconds, JobTimedOut, job.id):
                    value = job.perform()
            finally:
                self._performing = False
                self._running = None  # the job is over: its lease ends with the bookkeeping below, not "lost"
        except JobTimedOut:
            self._failed(job, queue, claim, InfraError(f"the job ran past its timeout ({seconds}s)", "job_timeout"))
            return
        except Exception as exc:  # noqa: BLE001 - the policy decides; BaseException (shutdown) passes
            self._failed(job, queue, claim, exc)
            return
        try:
            rq_adapter.finish_success(self, job, queue, value)
        except Exception as exc:  # noqa: BLE001 - bookkeeping broke: fail the job with it, never re-push it
            log.error("job.bookkeeping_failed", job_id=job.id, stage="success", error=f"{type(exc).__name__}: {exc}")
            self._failed(job, queue, claim, exc)
            return
        self.broker.done(claim, int((time.monotonic() - started) * 1000))

    def _failed(self, job: Job, queue: Queue, claim: Claim, exc: BaseException) -> None:
        decision = decide(exc, claim.failures, claim.parks, self._policy(claim.queue))
        log.info("job.failed", job_id=job.id, queue=claim.queue, action=decision.action,
                 error_class=decision.error_class, delay=round(decision.delay_sec, 3), error=str(exc)[:200])
        if decision.action == Action.FAIL:
            exc_string = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            self._give_up(job, queue, claim, decision.error_class, f"{decision.reason}: {exc}", exc_string)
            return
        try:
            rq_adapter.mark_waiting(self, job, parked=decision.action == Action.PARK)
        except Exception as e:  # noqa: BLE001 - rq's status only; the broker below decides what runs next
            log.error("job.bookkeeping_failed", job_id=job.id, stage="retry", error=f"{type(e).__name__}: {e}")
        if decision.action == Action.PARK:
            self.broker.park(claim, decision.delay_sec)
        else:
            self.broker.retry_later(claim, decision.delay_sec)

    def _give_up(self, job: Job, queue: Queue, claim: Claim, error_class: str, message: str, exc_string: str) -> None:
        """Record the failure through the job's hook, mark it failed in rq, free the slot: always all three."""
        hook = job.meta.get("on_give_up")
        if hook:
            try:
                import_attribute(hook)(payload=job.kwargs.get("payload"), error_class=error_class, message=message)
            except Exception as e:  # noqa: BLE001 - the store stays "queued": reconcile runs it again
                log.error("job.give_up_hook_failed", job_id=job.id, hook=hook, error=str(e))
        try:
            rq_adapter.finish_failure(self, job, queue, exc_string or message)
        except Exception as e:  # noqa: BLE001 - failure bookkeeping broke too: still end the job as failed
            log.error("job.bookkeeping_failed", job_id=job.id, stage="failure", error=f"{type(e).__name__}: {e}")
            try:
                rq_adapter.mark_failed(job)
            except Exception:  # noqa: BLE001 - Redis is away; the lease expiry brings the job back
                pass
        self.broker.give_up(claim)

    # the lease heartbeat: one thread per worker, stopped by close() -----------------------------
    def _ensure_heartbeat(self) -> None:
        if self._beat is None:
            self._beat = threading.Thread(target=self._renew_leases, name="envqa-lease-heartbeat", daemon=True)
            self._beat.start()

    def _renew_leases(self) -> None:
        interval = max(0.05, min(self.settings.lease_ttl_sec / 3, SEEN_EVERY_SEC))
        while not self._closed.wait(interval):
            claim = self._running
            try:
                self.broker.worker_seen(self.name, self.wanted)
                if claim is None or self.broker.renew(claim) or self._running is not claim:
                    continue
            except Exception as e:  # noqa: BLE001 - Redis away for a moment: try again next beat
                log.warning("lease.renew_failed", job_id=getattr(claim, "job_id", None), error=str(e))
                continue
            log.warning("lease.lost", job_id=claim.job_id, queue=claim.queue)
            self._lost = claim
            if self._performing:  # interrupt the job in the main thread (signals are delivered there)
                os.kill(os.getpid(), LEASE_LOST_SIGNAL)

    def _lease_lost(self, signum, frame):
        if self._performing and self._lost is not None and self._lost is self._running:
            raise LeaseLost()

    def close(self) -> None:
        """Stop the heartbeat thread and leave the live-worker list; safe to call twice."""
        self._closed.set()
        if self._beat is not None:
            self._beat.join(timeout=10)
            self._beat = None
        try:
            self.broker.worker_gone(self.name)
        except Exception:  # noqa: BLE001 - Redis away: the entry goes stale and stops counting as alive
            pass

    def subscribe(self):
        """No pubsub thread: rq's would listen for `rq.command` messages (stop/kill a horse) we never send,
        block up to 60 s in a read, and outlive a restarted work loop (one leaked thread per restart)."""

    # signals --------------------------------------------------------------------------------------
    def _install_signal_handlers(self):
        signal.signal(signal.SIGINT, self.request_stop)
        signal.signal(signal.SIGTERM, self._cold_stop)
        signal.signal(LEASE_LOST_SIGNAL, self._lease_lost)

    def request_stop(self, signum, frame):
        self.stop_requested = True
        super().request_stop(signum, frame)

    def _cold_stop(self, signum, frame):
        self.stop_requested = True
        raise SystemExit(143)


def run_worker(conn: Redis, queues: list[str], settings: SchedulerSettings, burst: bool = False,
               name: str | None = None, on_start=None) -> None:
    """`qa worker`: work until stopped by a signal. When the work loop ends on an error, start a fresh one
    after a backoff (Redis went away between two jobs, a bug hit between jobs); after more than
    `max_restarts` restarts within `restart_window_sec`, raise `WorkerCrashLoop` (the CLI exits 3) instead
    of spinning: a worker that cannot work must say so, not hold its slot forever."""
    restarts: deque[float] = deque()
    while True:
        worker = QAWorker(queues, connection=conn, settings=settings, name=name)
        reason = "the work loop ended on an error (see the traceback above)"
        try:
            if on_start is not None:
                on_start(worker)
            worker.work(burst=burst, logging_level="WARNING")
        except SHUTDOWN:
            raise
        except Exception as e:  # noqa: BLE001 - e.g. Redis gone during rq's own start-up bookkeeping
            reason = f"{type(e).__name__}: {e}"
            log.error("worker.loop_failed", error=reason, traceback=traceback.format_exc(limit=5))
        finally:
            worker.close()
        if burst or worker.stop_requested:
            return
        now = time.monotonic()
        restarts.append(now)
        while restarts and now - restarts[0] > settings.restart_window_sec:
            restarts.popleft()
        if len(restarts) > settings.max_restarts:
            log.error("worker.crash_loop", restarts=len(restarts), window_sec=settings.restart_window_sec)
            raise WorkerCrashLoop(len(restarts), settings.restart_window_sec, reason)
        delay = min(RESTART_BACKOFF_MAX_SEC, settings.restart_backoff_sec * 2 ** (len(restarts) - 1))
        log.warning("worker.restarting", reason=reason, restarts=len(restarts), delay_sec=round(delay, 3),
                    threads=threading.active_count(), thread_names=sorted(t.name for t in threading.enumerate()))
        time.sleep(delay)
        _wait_for_redis(conn)


def _wait_for_redis(conn: Redis) -> None:
    while True:
        try:
            conn.ping()
            return
        except RedisConnectionError:
            time.sleep(1.0)
