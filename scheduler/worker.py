"""`qa worker`: rq's own SimpleWorker, wrapped for queue selection, logging and health. Nothing of rq's is
overridden: any `rq worker --with-scheduler QUEUE...` (or `rq worker-pool`) on the same queues runs our jobs
the same way (envqa.scheduler.dispatch holds everything a job needs).

What the wrapper adds:
- `--queues '*'`: every queue anything was ever enqueued to (`envqa:queues`), re-read whenever the worker has
  been idle for a while (rq's `max_idle_time`: a second, doubling while the list stays the same, up to one
  lease and IDLE_RELOAD_MAX_SEC), so a model queue created after the worker started is served.
- rq's worker maintenance (which brings back abandoned jobs) every `lease_ttl_sec`, not every 10 minutes, and
  rq's scheduler (`with_scheduler`: retries' backoff and parks come back through it).
- a work loop that ends on an error (rq quits its loop on an unhandled exception, e.g. Redis gone between two
  jobs, or a job that broke rq's own bookkeeping) is started again after a backoff; after more than
  `max_restarts` restarts within `restart_window_sec` the worker raises `WorkerCrashLoop` (the CLI exits 3)
  instead of spinning: a worker that cannot work must say so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections import deque

import structlog
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from rq import Queue, SimpleWorker
from rq.exceptions import StopRequested

from envqa.core.config import SchedulerSettings
from envqa.core.defaults import (
    IDLE_RELOAD_MAX_SEC,
    IDLE_RELOAD_SEC,
    PARENT_GRACE_SEC,
    RESTART_BACKOFF_MAX_SEC,
    WORKER_TTL_SEC,
)
from envqa.core.errors import InfraError, RunCancelled
from envqa.scheduler import rq_adapter
from envqa.scheduler.embedded import PARENT_ENV, PR_SET_PDEATHSIG
from envqa.scheduler.lease import BEATER
from envqa.scheduler.queues import Keys

log = structlog.get_logger(__name__)

ALL_QUEUES = "*"
SHUTDOWN = (SystemExit, KeyboardInterrupt, RunCancelled)


class WorkerCrashLoop(InfraError):
    def __init__(self, restarts: int, window: float, reason: str):
        super().__init__(
            f"the worker loop failed {restarts} times within {window:g}s (last: {reason}); giving up",
            "worker_crash_loop",
        )


def resolve_queues(conn: Redis, wanted: list[str]) -> list[str]:
    """The queues to listen on now: `*` is every queue ever enqueued to (none yet: `sandbox`)."""
    if ALL_QUEUES not in wanted:
        return wanted
    known = sorted(m.decode() for m in conn.smembers(Keys.QUEUES))
    return known or ["sandbox"]


def make_worker(conn: Redis, queues: list[str], settings: SchedulerSettings, name: str | None = None) -> SimpleWorker:
    """rq's SimpleWorker as `qa worker` configures it (public constructor arguments only)."""
    lease = max(1, math.ceil(settings.lease_ttl_sec))
    return SimpleWorker(
        [Queue(q, connection=conn) for q in queues],
        connection=conn,
        name=name,
        maintenance_interval=lease,
        job_monitoring_interval=lease,
        worker_ttl=WORKER_TTL_SEC,
    )


def run_worker(
    conn: Redis,
    queues: list[str],
    settings: SchedulerSettings,
    burst: bool = False,
    name: str | None = None,
    on_start=None,
) -> None:
    """Work until stopped by a signal; see the module docstring for restarts and the crash-loop bound."""
    wanted = queues or [ALL_QUEUES]
    _watch_parent()
    restarts: deque[float] = deque()
    round_no = 0
    worker = None  # the previous round's worker: a restarted loop keeps its maintenance clock
    exits = _ExitReasons.install()
    idle_wait = IDLE_RELOAD_SEC  # grows while the queue list stays the same (see _next_idle_wait)
    while True:
        names = resolve_queues(conn, wanted)
        round_no += 1
        cleaned = getattr(worker, "last_cleaned_at", None)
        worker = make_worker(conn, names, settings, name=f"{name}-{round_no}" if name else None)
        if (
            cleaned is not None
        ):  # a loop restarted (idle, `*`) keeps its maintenance clock: every lease, not each second
            worker.last_cleaned_at = cleaned
        reason = "the work loop ended on an error (see the log above)"
        idle_reload = ALL_QUEUES in wanted and not burst
        exits.pop(worker.name, None)
        BEATER.watch_worker(conn, worker.name, settings.lease_ttl_sec)  # its alive key, before rq starts a job
        try:
            if on_start is not None:
                on_start(worker)
            worked = worker.work(
                burst=burst,
                logging_level="INFO",
                with_scheduler=True,
                max_idle_time=idle_wait if idle_reload else None,
            )
        except SHUTDOWN:
            raise
        except StopRequested:  # the stop signal landed in rq's teardown of an ended loop (an idle `*` reload):
            worker.teardown()  # a stop, not an error to restart after; finish the teardown it cut short (rq's
            return  # scheduler process), or the pool's stop waits out its grace (tests/scheduler/test_pool_stop.py)
        except Exception as e:  # noqa: BLE001 - e.g. Redis gone during rq's own start-up bookkeeping
            worked = False
            reason = f"{type(e).__name__}: {e}"
            exits[worker.name] = "error"
            log.error("worker.loop_failed", error=reason, traceback=traceback.format_exc(limit=5))
        if not rq_adapter.release_pubsub(worker):
            log.warning("worker.pubsub_thread_left", worker=worker.name)
        ended = exits.pop(worker.name, "stopped")
        if burst or ended == "stopped":
            return
        if ended == "idle":  # idle under `--queues '*'`: read the queue list again (not a failure)
            idle_wait = _next_idle_wait(idle_wait, worked, names, resolve_queues(conn, wanted), settings)
            continue
        now = time.monotonic()
        restarts.append(now)
        while restarts and now - restarts[0] > settings.restart_window_sec:
            restarts.popleft()
        if len(restarts) > settings.max_restarts:
            log.error("worker.crash_loop", restarts=len(restarts), window_sec=settings.restart_window_sec)
            raise WorkerCrashLoop(len(restarts), settings.restart_window_sec, reason)
        delay = min(RESTART_BACKOFF_MAX_SEC, settings.restart_backoff_sec * 2 ** (len(restarts) - 1))
        log.warning(
            "worker.restarting",
            reason=reason,
            restarts=len(restarts),
            delay_sec=round(delay, 3),
            threads=threading.active_count(),
            thread_names=sorted(t.name for t in threading.enumerate()),
        )
        time.sleep(delay)
        _wait_for_redis(conn)


def _next_idle_wait(current: int, worked: bool, before: list[str], now: list[str], settings: SchedulerSettings) -> int:
    """How long the next `*` loop may stay idle before it reads the queue list again. Each restart is a new
    rq worker (registration, a forked rq scheduler, a new name): every second, that is load on a busy host and
    churn in rq's worker list. So the wait doubles while nothing changes and is back to IDLE_RELOAD_SEC as soon
    as a queue appeared or the loop ran a job. It stays within one lease (and IDLE_RELOAD_MAX_SEC): an idle
    rq worker runs its maintenance, which takes abandoned jobs back, only between two waits."""
    if worked or before != now:
        return IDLE_RELOAD_SEC
    cap = max(IDLE_RELOAD_SEC, min(IDLE_RELOAD_MAX_SEC, int(settings.lease_ttl_sec)))
    return min(cap, current * 2)


class _ExitReasons(logging.Handler):
    """Why rq's work loop ended, from rq's own log lines (rq returns the same value for all three): idle
    (`max_idle_time`), an error (it quits on any unhandled exception), or else a stop request (a signal)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.by_worker: dict[str, str] = {}

    @classmethod
    def install(cls) -> dict[str, str]:
        rq_log = logging.getLogger("rq.worker")
        for h in rq_log.handlers:
            if isinstance(h, cls):
                return h.by_worker
        handler = cls()
        shown = logging.StreamHandler(sys.stderr)  # rq's own lines from WARNING up; INFO only feeds this class
        shown.setLevel(logging.WARNING)
        shown.setFormatter(logging.Formatter("%(asctime)s rq %(levelname)s %(message)s"))
        rq_log.addHandler(handler)
        rq_log.addHandler(shown)
        rq_log.propagate = False
        for other in ("rq.job", "rq.scheduler"):  # their INFO lines (every retry, every scheduler start) stay out
            logging.getLogger(other).addHandler(shown)
            logging.getLogger(other).propagate = False
        return handler.by_worker

    def emit(self, record: logging.LogRecord) -> None:
        text = str(record.msg)
        name = str(record.args[0]) if isinstance(record.args, tuple) and record.args else ""
        if "unhandled exception" in text or "connection timeout" in text:
            self.by_worker[name] = "error"
        elif "idle for" in text and "quitting" in text:
            self.by_worker.setdefault(name, "idle")


def _watch_parent() -> None:
    """A worker a pool started (QA_WORKER_PARENT_PID) ends when that process is gone, whatever it is doing.

    The kernel sends SIGTERM when the parent dies (PR_SET_PDEATHSIG), but rq swallows a stop request while it
    retries a lost Redis connection, and embedded mode's Redis dies with the same parent: the worker would
    wait for it forever. So a thread checks the parent: SIGTERM first (a running job is handed back and its
    sandbox removed), and if the process is still here PARENT_GRACE_SEC later, it exits.

    rq's scheduler (`with_scheduler`) is a process rq forks from the worker: it inherits neither the thread nor
    the death signal, so it outlived a killed worker (PPid 1, a Redis client forever). Every process forked
    from a worker therefore gets the same treatment towards the worker (`os.register_at_fork`), for any worker
    (`qa worker` started by hand too)."""
    global _FORK_HOOKED
    if not _FORK_HOOKED:
        _FORK_HOOKED = True
        _LIBC.append(_libc())
        os.register_at_fork(after_in_child=_forked_child)
    raw = os.environ.get(PARENT_ENV)
    if not raw or not raw.isdigit():
        return
    _start_watch(int(raw))


_FORK_HOOKED = False
_LIBC: list = []


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def _forked_child() -> None:
    """In a process forked from this worker (rq's scheduler): SIGTERM when the worker dies, and the watch."""
    libc = _LIBC[0] if _LIBC else None
    if libc is not None:
        try:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):
            pass
    _start_watch(os.getppid())


def _start_watch(parent: int) -> None:
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        log.warning("worker.parent_gone", parent=parent)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(PARENT_GRACE_SEC)
        log.error("worker.exit_after_parent", parent=parent, grace_sec=PARENT_GRACE_SEC)
        os._exit(143)

    threading.Thread(target=watch, name="envqa-parent-watch", daemon=True).start()


def _wait_for_redis(conn: Redis) -> None:
    while True:
        try:
            conn.ping()
            return
        except RedisConnectionError:
            time.sleep(1.0)
