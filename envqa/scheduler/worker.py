"""`qa worker`: an RQ worker that claims through the broker instead of popping queues blindly.

It claims only from queues with a free slot that are not parked, so it never holds a job it cannot start.
While a job runs, a heartbeat thread renews its lease. When the job raises, the retry policy decides:
park the model's queue (rate limit; the job goes back to the front, no attempt spent), retry later with
backoff, or give up (the job's `on_give_up` hook records the failure, e.g. an infra trial result). A
SIGTERM stops the worker at once and puts its job back; SIGINT waits for the job, as in RQ.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
import traceback
from contextvars import ContextVar

import structlog
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.timeouts import JobTimeoutException
from rq.utils import import_attribute, now
from rq.worker import SimpleWorker, WorkerStatus

from envqa.config import QueueSettings, SchedulerSettings
from envqa.scheduler.broker import Broker, Claim
from envqa.scheduler.policy import Action, decide
from envqa.scheduler.queues import Keys, queue_settings

log = structlog.get_logger(__name__)

ALL_QUEUES = "*"
# The claim a job is running under; jobs read it (attempt numbers) through `current_claim()`.
_CURRENT: ContextVar[Claim | None] = ContextVar("envqa_claim", default=None)


def current_claim() -> Claim | None:
    return _CURRENT.get()


class QAWorker(SimpleWorker):
    def __init__(self, queues: list[str], connection: Redis, settings: SchedulerSettings | None = None, **kw):
        self.settings = settings or SchedulerSettings()
        self.wanted = queues or [ALL_QUEUES]
        placeholder = [q for q in self.wanted if q != ALL_QUEUES] or ["sandbox"]
        super().__init__([Queue(q, connection=connection) for q in placeholder], connection=connection, **kw)
        self.broker = Broker(connection, self.settings.lease_ttl_sec)
        self._claim: Claim | None = None
        self._policies: dict[str, tuple[float, QueueSettings]] = {}
        self._rq_queues: dict[str, Queue] = {}
        self._running: Claim | None = None
        self._beat: threading.Thread | None = None

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

    # claiming -------------------------------------------------------------------------------------
    def dequeue_job_and_maintain_ttl(self, timeout, max_idle_time=None):
        idle_since, last_beat = time.monotonic(), 0.0
        default_limit = self.settings.defaults.concurrency or 1
        while True:
            try:
                if last_beat == 0.0:
                    self.set_state(WorkerStatus.IDLE)
                if time.monotonic() - last_beat > 10:
                    self.heartbeat()
                    last_beat = time.monotonic()
                names = self._queue_names()
                claim = self.broker.claim(names, default_limit) if names else None
            except RedisConnectionError as e:  # Redis restarting: wait for it; reconcile restores the jobs
                log.warning("redis.unreachable", error=str(e))
                time.sleep(1.0)
                continue
            if claim is not None:
                try:
                    job = self.job_class.fetch(claim.job_id, connection=self.connection, serializer=self.serializer)
                except NoSuchJobError:
                    self.broker.give_up(claim)
                    continue
                self._claim = claim
                if claim.queue not in self._rq_queues:
                    self._rq_queues[claim.queue] = Queue(claim.queue, connection=self.connection,
                                                         serializer=self.serializer)
                return job, self._rq_queues[claim.queue]
            if timeout is None and self._nothing_left(names):  # burst mode: stop when nothing can come
                return None
            if max_idle_time is not None and time.monotonic() - idle_since > max_idle_time:
                return None
            time.sleep(self.settings.poll_interval_sec)

    def _nothing_left(self, names: list[str]) -> bool:
        if ALL_QUEUES in names:
            names = self.broker.known_queues()
        with self.connection.pipeline() as p:
            for q in names:
                p.llen(Keys.queue(q))
                p.zcard(Keys.delayed(q))
                p.zcard(Keys.leases(q))
            return not any(p.execute())

    # running --------------------------------------------------------------------------------------
    def execute_job(self, job: Job, queue: Queue):
        claim, self._claim = self._claim, None
        assert claim is not None
        self._ensure_heartbeat()
        self._running = claim
        token = _CURRENT.set(claim)
        started = time.monotonic()
        ended = False
        try:
            self.prepare_execution(job)
            self.prepare_job_execution(job)
            job.started_at = job.last_heartbeat
            try:
                with self.death_penalty_class(job.timeout or self.settings.job_timeout_sec, JobTimeoutException,
                                              job_id=job.id):
                    job._result = job.perform()
            except Exception as exc:  # noqa: BLE001 - the policy decides; BaseException (shutdown) passes
                self._failed(job, queue, claim, exc, sys.exc_info())
            else:
                job.ended_at = now()
                job._status = JobStatus.FINISHED
                self.handle_job_success(job=job, queue=queue, started_job_registry=queue.started_job_registry)
                self.broker.done(claim, int((time.monotonic() - started) * 1000))
            ended = True
        finally:
            _CURRENT.reset(token)
            self._running = None
            if not ended:  # shut down mid-job: hand the job back untouched
                self.broker.requeue(claim)
            self.set_state(WorkerStatus.IDLE)

    def _failed(self, job: Job, queue: Queue, claim: Claim, exc: Exception, exc_info) -> None:
        job.ended_at = now()
        decision = decide(exc, claim.failures, claim.parks, self._policy(claim.queue))
        log.info("job.failed", job_id=job.id, queue=claim.queue, action=decision.action,
                 error_class=decision.error_class, delay=round(decision.delay_sec, 3), error=str(exc)[:200])
        if decision.action == Action.FAIL:
            hook = job.meta.get("on_give_up")
            if hook:
                try:
                    import_attribute(hook)(payload=job.kwargs.get("payload"), error_class=decision.error_class,
                                           message=f"{decision.reason}: {exc}")
                except Exception as e:  # noqa: BLE001 - the store stays "queued": reconcile runs it again
                    log.error("job.give_up_hook_failed", job_id=job.id, hook=hook, error=str(e))
            exc_string = "".join(traceback.format_exception(*exc_info))
            self.handle_job_failure(job=job, queue=queue, started_job_registry=queue.started_job_registry,
                                    exc_string=exc_string)
            self.broker.give_up(claim)
            return
        with self.connection.pipeline() as p:  # RQ's view first, so a fast re-claim is not overwritten
            job.set_status(JobStatus.QUEUED if decision.action == Action.PARK else JobStatus.SCHEDULED, pipeline=p)
            self.cleanup_execution(job, pipeline=p)
            p.execute()
        if decision.action == Action.PARK:
            self.broker.park(claim, decision.delay_sec)
        else:
            self.broker.retry_later(claim, decision.delay_sec)

    def _ensure_heartbeat(self) -> None:
        """One long-lived thread renews the lease of whatever job runs now (no thread per job)."""
        if self._beat is None:
            self._beat = threading.Thread(target=self._renew_leases, name="envqa-lease-heartbeat", daemon=True)
            self._beat.start()

    def _renew_leases(self) -> None:
        interval = max(0.05, self.settings.lease_ttl_sec / 3)
        while True:
            time.sleep(interval)
            claim = self._running
            if claim is None:
                continue
            try:
                if not self.broker.renew(claim) and self._running is claim:
                    log.warning("lease.lost", job_id=claim.job_id, queue=claim.queue)
            except Exception as e:  # noqa: BLE001 - Redis away for a moment: try again next beat
                log.warning("lease.renew_failed", job_id=claim.job_id, error=str(e))

    # signals --------------------------------------------------------------------------------------
    def _install_signal_handlers(self):
        signal.signal(signal.SIGINT, self.request_stop)
        signal.signal(signal.SIGTERM, self._cold_stop)

    def _cold_stop(self, signum, frame):
        raise SystemExit(143)


def run_worker(conn: Redis, queues: list[str], settings: SchedulerSettings, burst: bool = False,
               name: str | None = None, on_start=None) -> None:
    """`qa worker`: work until stopped by a signal. When RQ's loop gives up on an error (Redis went away
    between two jobs), wait for Redis and start again instead of leaving the queues unserved."""
    while True:
        worker = QAWorker(queues, connection=conn, settings=settings, name=name)
        if on_start is not None:
            on_start(worker)
        worker.work(burst=burst, logging_level="WARNING")
        if burst or worker._shutdown_requested_date is not None:
            return
        log.warning("worker.restarting", reason="the work loop ended on an error")
        while True:
            try:
                conn.ping()
                break
            except RedisConnectionError:
                time.sleep(1.0)
