"""The one loop that follows queued work in Redis mode: trials, probe jobs and model calls (the reviser, the
generator, the trace analyst) alike.

A caller enqueues, then waits on the store (the truth), and the wait is never blind:
- every `poll_sec` it reads the store (`step`: handle what finished, return the queues still holding work);
- every call it asks `Liveness`: the embedded `watchdog` (its workers died) and, every STALL_CHECK_SEC, the
  stall check: a queue holding this caller's work with no live worker listening on it is reported (event
  "stalled") after STALL_REPORT_AFTER_SEC and raises InfraError `stalled` after `[scheduler]
  stall_timeout_sec`. A worker killed with -9 stays in rq's worker list until its key expires (worker_ttl);
  the check leaves out a watched worker (envqa.scheduler.lease) whose alive key is gone, so it sees the
  death within one lease;
- every `reconcile_sec` it puts back what Redis lost (`reconcile`);
- at the monotonic `deadline` it stops: `follow` returns False and the caller ends in its own clear error
  (trials: `[scheduler] follow_deadline_sec`; a model call: `[scheduler] call_deadline_sec`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from redis import Redis

from envqa.core.config import SchedulerSettings
from envqa.core.defaults import STALL_CHECK_SEC, STALL_REPORT_AFTER_SEC
from envqa.core.errors import InfraError
from envqa.core.events import EventSink, RunEvent
from envqa.scheduler.lease import alive_key, leased_key
from envqa.scheduler.status import held


class Liveness:
    """Is anything working on what this caller waits for? Raises InfraError when not (see the module doc)."""

    def __init__(
        self,
        conn: Callable[[], Redis],
        settings: SchedulerSettings,
        on_event: EventSink,
        watchdog: Callable[[], None] | None = None,
    ):
        self._conn, self.settings, self.on_event, self.watchdog = conn, settings, on_event, watchdog
        self._stalled_since: dict[str, float] = {}
        self._last_check = time.monotonic()

    def check(self, queues: set[str]) -> None:
        if self.watchdog is not None:
            self.watchdog()
        if time.monotonic() - self._last_check > STALL_CHECK_SEC:
            self.check_stall(queues)
            self._last_check = time.monotonic()

    def check_stall(self, queues: set[str]) -> None:
        """A queue holding this caller's work with no live rq worker listening on it: report it, and after
        `stall_timeout_sec` (0: never) raise, naming the queue."""
        conn = self._conn()
        served = live_queues(conn)
        now = time.monotonic()
        for q in sorted(queues):
            count = 0 if q in served else held(conn, q)
            if not count:
                self._stalled_since.pop(q, None)
                continue
            since = self._stalled_since.setdefault(q, now)
            if now - since >= STALL_REPORT_AFTER_SEC:  # not while a worker is still starting
                self.on_event(RunEvent.STALLED, queue=q, seconds=now - since, jobs=count)
            limit = self.settings.stall_timeout_sec
            if limit and now - since >= limit:
                raise InfraError(
                    f"queue {q!r} has held {count} job(s) for {now - since:.0f}s with no live worker "
                    f"listening on it; start one: qa worker --queues {q} (or raise --stall-timeout)",
                    "stalled",
                )


def live_queues(conn: Redis) -> set[str]:
    """Queues some live rq worker listens on. rq keeps a worker's key alive with its heartbeat (`qa worker`:
    every ~10 s when idle, worker_ttl 25 s), so a dead idle worker drops out by itself, but only then; a
    watched worker (`leased` mark) whose alive key is gone died already and is left out now."""
    from rq import Worker

    workers = Worker.all(connection=conn)
    with conn.pipeline() as p:
        for w in workers:
            p.exists(leased_key(w.name))
            p.exists(alive_key(w.name))
        marks = p.execute()
    dead = {w.name for w, leased, alive in zip(workers, marks[::2], marks[1::2], strict=True) if leased and not alive}
    return {q for w in workers if w.name not in dead for q in w.queue_names()}


def follow(
    step: Callable[[], set[str]],
    reconcile: Callable[[set[str]], None],
    liveness: Liveness,
    *,
    deadline: float,
    poll_sec: float,
    reconcile_sec: float,
) -> bool:
    """Wait until `step()` (read the store, handle what finished) returns no open queue: True; False once the
    monotonic `deadline` has passed with work still open. Liveness errors propagate."""
    last_reconcile = time.monotonic()
    while True:
        open_queues = step()
        if not open_queues:
            return True
        if time.monotonic() >= deadline:
            return False
        liveness.check(open_queues)
        if time.monotonic() - last_reconcile > reconcile_sec:
            reconcile(open_queues)
            last_reconcile = time.monotonic()
        time.sleep(poll_sec)
