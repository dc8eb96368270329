"""The executor the graph uses on Redis: submit trials to their model's queue, then follow the store.

It only enqueues and waits: workers (local in embedded mode, on any host otherwise) do the work and record
results. Following reads the store (the source of truth), and every few seconds reconciles, so a trial
Redis lost (restart) is enqueued again instead of being waited on forever.
"""

from __future__ import annotations

import time
from typing import Callable

import structlog
from redis import Redis

from envqa.config import QAConfig
from envqa.environment import Environment
from envqa.models import TrialResult, TrialSpec
from envqa.scheduler.broker import Broker
from envqa.scheduler.jobs import reconcile, submit
from envqa.scheduler.trial_job import trial_envelope
from envqa.store.db import Store

log = structlog.get_logger(__name__)
EventSink = Callable[..., None]


class RQExecutor:
    def __init__(self, config: QAConfig, store: Store, url: str | Callable[[], str],
                 on_event: EventSink | None = None, poll_sec: float = 0.1, reconcile_every_sec: float = 5.0):
        self.config, self.store = config, store
        self._url = url
        self.on_event = on_event or (lambda *a, **k: None)
        self.poll_sec, self.reconcile_every_sec = poll_sec, reconcile_every_sec
        self._conn: Redis | None = None

    @property
    def conn(self) -> Redis:
        if self._conn is None:  # the URL may be a callable: embedded mode starts Redis on first use
            self._conn = Redis.from_url(self._url() if callable(self._url) else self._url)
        return self._conn

    def run(self, env: Environment, specs: list[TrialSpec]) -> list[TrialResult]:
        settings = self.config.scheduler
        pending = [s for s in specs if self.store.get_trial(s.trial_id) is None]
        if pending:
            broker = Broker(self.conn, settings.lease_ttl_sec)
            for spec in pending:
                submit(self.store, self.conn, broker, spec, trial_envelope(spec, env.root, self.config), settings)
            self._follow(pending, broker)
        by_id = {s.trial_id: self.store.get_trial(s.trial_id) for s in specs}
        results = []
        for spec in specs:
            if spec not in pending:
                self.on_event("trial_done", spec=spec, result=by_id[spec.trial_id])
            results.append(by_id[spec.trial_id])
        return results

    def _follow(self, pending: list[TrialSpec], broker: Broker) -> None:
        waiting = {s.trial_id: s for s in pending}
        started: set[str] = set()
        last_reconcile = time.monotonic()
        run_id = pending[0].run_id
        while waiting:
            states = self.store.trial_states(list(waiting))
            for tid, (status, _attempts) in states.items():
                spec = waiting[tid]
                if status in ("running", "done") and tid not in started:
                    started.add(tid)
                    self.on_event("trial_start", spec=spec)
                if status == "done":
                    del waiting[tid]
                    self.on_event("trial_done", spec=spec, result=self.store.get_trial(tid))
            if not waiting:
                return
            if time.monotonic() - last_reconcile > self.reconcile_every_sec:
                reconcile(self.store, self.conn, broker, self.config.scheduler, run_id=run_id)
                last_reconcile = time.monotonic()
            time.sleep(self.poll_sec)
