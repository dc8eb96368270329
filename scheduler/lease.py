"""Leases on stock rq 3: one beat thread per worker process, no per-job thread.

Why: rq gives a running job an execution heartbeat of its timeout + 60 s (a sim job: 11 minutes; a trial: an
hour), so a worker killed with -9 hides its job (and holds its RateLimit slot) that long. Two things make it
`lease_ttl_sec` instead:
- the beat thread keeps the CURRENT job's execution heartbeat at `ttl` seconds from now (and runs the job's
  `on_beat` hooks) every ttl / 3. `run_envelope` only sets and clears the current job in memory (no thread
  start or join, no Redis round trip on the job's path, no beat per job: a job shorter than a beat is never
  renewed, and needs not be: a dead worker is found by its alive key, below);
- rq starts a job (and gives it timeout + 60 s) a few round trips BEFORE it calls our function, so a kill in that
  window would still cost the full timeout. The beat thread therefore also keeps an alive key for its worker
  (`envqa:alive:<worker name>`, PX ttl) from before the first job, and every beat one process (a Redis NX lock)
  looks for executions of a worker that had an alive key (`envqa:leased:<name>`) whose key is gone and whose
  execution was not heartbeaten for `ttl`: those workers are dead, so their executions are expired now and rq's
  own `StartedJobRegistry.cleanup` (worker maintenance, every lease) fails them with AbandonedJobError and
  retries them through their Retry.
A worker `qa worker` starts is watched from its start (the mark is written before rq's loop starts, not on the
thread's first beat: every idle `--queues '*'` loop is a new name, and a kill before that beat kept the job for
rq's timeout + 60 s, past the chaos benchmark's deadline); a stock `rq worker` from its first job of ours. A worker
never seen beating loses its executions after UNWATCHED_LEASES leases. A job rq never marked STARTED (the
worker died between rq's `prepare_execution` and `prepare_job_execution`) rq's cleanup would drop without a
retry: it goes back on its queue here (rq_adapter.requeue_unstarted).
When rq took the current job back (its execution left the registry: this process looked dead) the job is
interrupted with LeaseLost (SIGUSR2, handled in the main thread, where a SimpleWorker runs the job).
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time

import structlog
from redis import Redis
from redis.exceptions import RedisError
from rq.executions import Execution, ExecutionRegistry
from rq.job import Job
from rq.registry import StartedJobRegistry

from envqa.core.defaults import LEASED_MARK_SEC, UNWATCHED_LEASES, UNWATCHED_MIN_SEC
from envqa.scheduler import rq_adapter
from envqa.scheduler.queues import Keys

log = structlog.get_logger(__name__)

LEASE_LOST_SIGNAL = signal.SIGUSR2
SCAN_LOCK = "envqa:alive-scan"


def alive_key(worker: str) -> str:
    return f"envqa:alive:{worker}"


def leased_key(worker: str) -> str:
    return f"envqa:leased:{worker}"


class LeaseLost(BaseException):
    """rq took this job back (its execution expired: this worker looked dead) and another worker may run it:
    stop now, so the trial is recorded once and the model is not paid twice."""


class Lease:
    """One job's lease, as the beat thread sees it (built and dropped by `run_envelope`, in memory only)."""

    def __init__(self, job: Job, ttl: float):
        self.job, self.ttl = job, max(1, math.ceil(ttl))
        self.lost = False
        self.ended = False
        self.hooks: list = []  # run on every beat (e.g. the trial's lease in the store): dispatch.on_beat
        self.executions: list[Execution] | None = None  # found by the beat thread on its first beat
        self._previous = None

    def _interrupt(self, signum, frame):
        if self.lost and not self.ended:
            raise LeaseLost()


class Beater:
    """The process's beat thread (started once, lives as long as the process)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.current: Lease | None = None
        self.conn: Redis | None = None
        self.worker: str | None = None
        self.tick = 10.0

    # -- called from the job's (main) thread -------------------------------------------------------------------
    def watch_worker(self, conn: Redis, worker: str, ttl: float) -> None:
        """Keep `worker`'s alive key from now on (`qa worker` calls it before rq's work loop starts)."""
        with self._lock:
            self.conn, self.worker = conn, worker
            self.tick = min(self.tick, max(0.2, ttl / 3))
        try:  # here, not on the thread's first beat: rq may start a job under this name a few round trips from now
            self._mark(conn, worker, None)
        except RedisError as e:  # no Redis, no job either: the thread marks it once Redis is back
            log.warning("lease.mark_failed", worker=worker, error=f"{type(e).__name__}: {e}")
        self._start()
        self._wake.set()

    def begin(self, job: Job, ttl: float) -> Lease:
        lease = Lease(job, ttl)
        if threading.current_thread() is threading.main_thread():
            lease._previous = signal.signal(LEASE_LOST_SIGNAL, lease._interrupt)
        with self._lock:
            if self.conn is None:
                self.conn = job.connection
            self.tick = min(self.tick, max(0.2, lease.ttl / 3))
            self.current = lease
            unknown = self.worker is None
        self._start()
        if unknown:  # a stock rq worker's first job of ours: learn its name (and keep it alive) right away
            self._wake.set()
        return lease

    def end(self, lease: Lease) -> None:
        with self._lock:
            lease.ended = True
            if self.current is lease:
                self.current = None
        if lease._previous is not None:
            signal.signal(LEASE_LOST_SIGNAL, lease._previous)

    # -- the thread --------------------------------------------------------------------------------------------
    def _start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._thread = threading.Thread(target=self._run, name="envqa-lease", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait(self.tick)
            self._wake.clear()
            try:
                self.beat()
            except Exception as e:  # noqa: BLE001 - Redis away for a moment: the next beat tries again
                log.warning("lease.beat_failed", error=f"{type(e).__name__}: {e}")

    def beat(self) -> None:
        with self._lock:
            lease, conn = self.current, self.conn
        if lease is not None and self.worker is None:
            self._find(lease)
        if self.worker is not None and conn is not None:
            self._mark(conn, self.worker, lease)
        if lease is not None and not lease.ended:
            self._renew_job(lease)
        if conn is not None and conn.set(SCAN_LOCK, os.getpid(), nx=True, px=int(self.tick * 1000)):
            expire_dead(conn)

    def _mark(self, conn: Redis, worker: str, lease: Lease | None) -> None:
        """`worker` is alive for one lease from now, and watched (its executions expire when it stops)."""
        ttl_ms = int(max(1.0, lease.ttl if lease else self.tick * 3) * 1000)
        with conn.pipeline() as p:
            p.set(alive_key(worker), os.getpid(), px=ttl_ms)
            p.set(leased_key(worker), 1, ex=max(LEASED_MARK_SEC, 10 * math.ceil(ttl_ms / 1000)))
            p.execute()

    def _find(self, lease: Lease) -> None:
        """This run's execution: the newest one rq still has (a dead worker's may linger in the job's list)."""
        found = []
        for execution_id in ExecutionRegistry(lease.job.id, connection=lease.job.connection).get_execution_ids():
            try:
                found.append(Execution.fetch(execution_id, lease.job.id, lease.job.connection))
            except ValueError:  # gone with its TTL: an earlier, abandoned run
                continue
        lease.executions = sorted(found, key=lambda e: e.created_at)[-1:]
        if lease.executions and self.worker is None:
            self.worker = lease.executions[0].worker_name  # a stock rq worker: watched from now on

    def _renew_job(self, lease: Lease) -> None:
        """Still ours? Then renew rq's heartbeat first and run the hooks (the store: slow on a loaded host) after,
        so a slow store can neither let the lease lapse nor delay noticing that it was lost."""
        if lease.executions is None:
            self._find(lease)
        conn = lease.job.connection
        registry = StartedJobRegistry(lease.job.origin, connection=conn)
        with conn.pipeline() as p:
            for execution in lease.executions:
                p.zscore(registry.key, execution.composite_key)
            held = [score is not None for score in p.execute()]
        if lease.executions and not any(held):
            if lease.ended:
                return
            log.warning(
                "job.lease_lost",
                job_id=lease.job.id,
                queue=lease.job.origin,
                detail="rq took the job back; this run stops before recording anything",
            )
            lease.lost = True
            if lease._previous is not None:
                os.kill(os.getpid(), LEASE_LOST_SIGNAL)
            return
        with conn.pipeline() as p:
            for execution in lease.executions:
                execution.heartbeat(registry, lease.ttl, pipeline=p)
            p.execute()
        for hook in list(lease.hooks):
            try:
                hook()
            except Exception as e:  # noqa: BLE001 - the store away for a moment: the next beat tries again
                log.warning("lease.hook_failed", job_id=lease.job.id, error=str(e))


def expire_dead(conn: Redis) -> list[str]:
    """Take back the executions of workers that stopped beating (killed, say, before their job reached our code);
    returns their composite keys. A job rq had already marked STARTED has its execution expired now, and rq's
    own cleanup fails it with AbandonedJobError and retries it: a worker's maintenance (every lease) or the
    follower's reconcile. Not here: rq runs the failure callback under a SIGALRM death penalty, which only the
    main thread can set. A job rq had not marked STARTED yet (the worker died between rq's `prepare_execution`
    and `prepare_job_execution`) rq's cleanup would drop without a retry: it goes back on its queue here."""
    now = time.time()
    taken: list[str] = []
    for raw in conn.smembers(Keys.QUEUES):
        queue = raw.decode()
        registry = StartedJobRegistry(queue, connection=conn)
        for job_id, execution_id in registry.get_job_and_execution_ids(cleanup=False):  # rq cleans in main threads
            execution = _dead_execution(conn, job_id, execution_id, now)
            if execution is not None:
                taken.append(_take_back(conn, registry, queue, execution, now))
    return taken


def _dead_execution(conn: Redis, job_id: str, execution_id: str, now: float) -> Execution | None:
    """The execution, when its worker has no alive key and it was not heartbeaten for its lease. A worker never
    seen beating (no `leased` mark: a stock rq worker before its first job of ours reached our code, or one
    killed before its first beat) gets UNWATCHED_LEASES leases instead of rq's own timeout + 60 s."""
    try:
        execution = Execution.fetch(execution_id, job_id, conn)
    except ValueError:
        return None
    name = execution.worker_name
    if not name or conn.exists(alive_key(name)):
        return None
    ttl = _lease_ttl(conn, job_id)
    if not conn.exists(leased_key(name)):
        ttl = max(UNWATCHED_LEASES * ttl, UNWATCHED_MIN_SEC)
    if now - execution.last_heartbeat.timestamp() < ttl:
        return None
    return execution


def _take_back(conn: Redis, registry: StartedJobRegistry, queue: str, execution: Execution, now: float) -> str:
    if rq_adapter.requeue_unstarted(conn, queue, execution.job_id, execution.id, now):
        log.warning("lease.unstarted_requeued", job_id=execution.job_id, queue=queue, worker=execution.worker_name)
        return execution.composite_key
    with conn.pipeline() as p:
        registry.add_execution(execution, ttl=0, pipeline=p, xx=True)
        p.execute()
    log.warning("lease.worker_dead", job_id=execution.job_id, queue=queue, worker=execution.worker_name)
    return execution.composite_key


def _lease_ttl(conn: Redis, job_id: str) -> float:
    try:
        return float(Job.fetch(job_id, connection=conn).meta.get("lease_ttl") or 30)
    except Exception:  # noqa: BLE001 - gone meanwhile: nothing to expire
        return float("inf")


BEATER = Beater()
