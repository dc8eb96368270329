"""The executor the graph uses on Redis: submit trials to their model's queue, then follow the store.

It only enqueues and waits: workers (local in embedded mode, on any host otherwise) do the work and record
results. Following reads the store (the source of truth), and every few seconds reconciles, so a trial
Redis lost (restart) is enqueued again instead of being waited on forever.

It never waits without bound either: trials, probe jobs and model calls all wait in the one follow loop
(envqa.scheduler.follow). Embedded mode passes a `watchdog` that raises when its workers have died (crash
loop); a queue that holds this caller's work with no live worker claiming from it is reported (event
"stalled") and, after `[scheduler] stall_timeout_sec`, ends the run with exit 3; and every wait has a
deadline from config (`follow_deadline_sec` for trials and probes, `call_deadline_sec` for a model call).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog
from redis import Redis

from envqa.core.config import QAConfig
from envqa.core.defaults import FOLLOW_POLL_SEC, RECONCILE_SEC
from envqa.core.environment import Environment
from envqa.core.errors import InfraError
from envqa.core.events import EventSink, RunEvent
from envqa.core.executor import Call, ProbeJob, ProbeOutcome, TrialView, outcome_of, result_of
from envqa.core.models import TrialResult, TrialSpec
from envqa.core.queues import queue_for_model
from envqa.core.statuses import CallStatus, TrialStatus
from envqa.scheduler.calls import call_envelopes, enqueue_and_follow
from envqa.scheduler.follow import Liveness, follow
from envqa.scheduler.jobs import reconcile, recover_abandoned, submit
from envqa.scheduler.probe_job import probe_envelope
from envqa.scheduler.trial_job import trial_envelope
from envqa.store.db import Store
from envqa.store.shared_files import fetch_trial_artifacts, publish_environment

log = structlog.get_logger(__name__)


def queue_of(spec: TrialSpec) -> str:
    return queue_for_model(spec.model)


class RQExecutor:
    def __init__(
        self,
        config: QAConfig,
        store: Store,
        url: str | Callable[[], str],
        on_event: EventSink | None = None,
        poll_sec: float = FOLLOW_POLL_SEC,
        reconcile_every_sec: float = RECONCILE_SEC,
        watchdog: Callable[[], None] | None = None,
    ):
        self.config, self.store = config, store
        self._url = url
        self.on_event = on_event or (lambda *a, **k: None)
        self.poll_sec, self.reconcile_every_sec = poll_sec, reconcile_every_sec
        self._conn: Redis | None = None
        self.liveness = Liveness(lambda: self.conn, config.scheduler, self.on_event, watchdog)

    @property
    def conn(self) -> Redis:
        if self._conn is None:  # the URL may be a callable: embedded mode starts Redis on first use
            self._conn = Redis.from_url(self._url() if callable(self._url) else self._url)
        return self._conn

    def run(self, env: Environment, specs: list[TrialSpec]) -> list[TrialResult]:
        settings = self.config.scheduler
        self.on_event(RunEvent.TRIALS_QUEUED, count=len(specs))
        pending = [s for s in specs if self.store.get_trial(s.trial_id) is None]
        if pending:
            if self.store.shared:  # workers on other hosts read the task from the store
                publish_environment(self.store, env.root, env.version)
            for spec in pending:
                submit(self.store, self.conn, spec, trial_envelope(spec, env.root, self.config, self.store), settings)
            self._follow(pending)
        by_id = {s.trial_id: self.store.get_trial(s.trial_id) for s in specs}
        results = []
        for spec in specs:
            if spec not in pending:
                self._materialize(spec)
                self.on_event(RunEvent.TRIAL_DONE, spec=spec, result=by_id[spec.trial_id])
            results.append(by_id[spec.trial_id])
        return results

    def _follow(self, pending: list[TrialSpec]) -> None:
        """Wait for the trials in the one follow loop (envqa.scheduler.follow), announcing each start and end;
        InfraError `timeout` after `[scheduler] follow_deadline_sec`."""
        waiting = {s.trial_id: s for s in pending}
        started: set[str] = set()
        run_id = pending[0].run_id

        def step() -> set[str]:
            for tid, (status, _attempts) in self.store.trial_states(list(waiting)).items():
                spec = waiting[tid]
                if status in (TrialStatus.RUNNING, TrialStatus.DONE) and tid not in started:
                    started.add(tid)
                    self.on_event(RunEvent.TRIAL_START, spec=spec)
                if status == TrialStatus.DONE:
                    del waiting[tid]
                    self._materialize(spec)
                    self.on_event(RunEvent.TRIAL_DONE, spec=spec, result=self.store.get_trial(tid))
            return {queue_of(s) for s in waiting.values()}

        def put_back(queues: set[str]) -> None:
            recover_abandoned(self.conn, queues)
            reconcile(self.store, self.conn, self.config.scheduler, run_id=run_id)

        limit = self.config.scheduler.follow_deadline_sec
        if not follow(
            step,
            put_back,
            self.liveness,
            deadline=time.monotonic() + limit,
            poll_sec=self.poll_sec,
            reconcile_sec=self.reconcile_every_sec,
        ):
            raise InfraError(
                f"{len(waiting)} trial(s) of run {run_id} not done within {limit:.0f}s "
                f"([scheduler] follow_deadline_sec), e.g. {', '.join(sorted(waiting)[:3])}",
                "timeout",
            )

    def run_call(self, call: Call, *, deadline_sec: float | None = None) -> dict:
        """One call as a job on its model's queue; its result, or InfraError when it gave up or ran late
        (`deadline_sec`, by default `[scheduler] call_deadline_sec`)."""
        limit = self.config.scheduler.call_deadline_sec if deadline_sec is None else deadline_sec
        row = self.run_calls([call], deadline_sec=limit)[call.call_id]
        if row["status"] == CallStatus.DONE:
            return result_of(row)
        if row["status"] == CallStatus.FAILED:
            raise InfraError(
                f"{call.model}: call {call.call_id} gave up: {row['error_message']}", row["error_class"] or "infra"
            )
        raise InfraError(
            f"{call.model}: call {call.call_id} did not finish within {limit:.0f}s ([scheduler] call_deadline_sec)",
            "timeout",
        )

    def run_calls(self, calls: list[Call], *, deadline_sec: float) -> dict[str, dict]:
        """Every call at once, each on its model's queue, in the one follow loop (stall check, watchdog); waits
        at most `deadline_sec`. {call_id: row}; a call still open at the deadline has status `queued`."""
        envelopes = call_envelopes(self.config, calls, self.store)
        rows = enqueue_and_follow(
            self.store,
            self.conn,
            envelopes,
            self.config.scheduler,
            self.liveness,
            deadline=time.monotonic() + deadline_sec,
            reconcile_sec=self.reconcile_every_sec,
            poll_sec=self.poll_sec,
        )
        for call_id in set(envelopes) - set(rows):
            rows[call_id] = {
                **(self.store.get_call(call_id) or {}),
                "call_id": call_id,
                "status": CallStatus.QUEUED.value,
            }
        return rows

    def run_probe_jobs(self, jobs: list[ProbeJob]) -> list[ProbeOutcome]:
        """Probes as jobs on the `sandbox` queue: enqueue each unless its answer is stored, follow the store's
        `calls` rows (reconciling, watching for stalls like trials), then bring the probes' trial files here
        and announce their results."""
        if self.store.shared:
            for env_dir, version in {(j.env_dir, j.env_version) for j in jobs}:
                publish_environment(self.store, env_dir, version)
        limit = self.config.scheduler.follow_deadline_sec
        rows = enqueue_and_follow(
            self.store,
            self.conn,
            {j.job_id: probe_envelope(j, self.config, self.store) for j in jobs},
            self.config.scheduler,
            self.liveness,
            deadline=time.monotonic() + limit,
            reconcile_sec=self.reconcile_every_sec,
            poll_sec=self.poll_sec,
        )
        missing = [j.job_id for j in jobs if j.job_id not in rows]
        if missing:
            raise InfraError(
                f"{len(missing)} probe job(s) not done within {limit:.0f}s ([scheduler] follow_deadline_sec), "
                f"e.g. {', '.join(missing[:3])}",
                "timeout",
            )
        outcomes = [outcome_of(job, rows[job.job_id]) for job in jobs]
        for outcome in outcomes:
            for trial_id in outcome.trial_ids:
                result = self.store.get_trial(trial_id)
                if result is not None:
                    view = TrialView(result)
                    self._materialize(view)
                    self.on_event(RunEvent.TRIAL_START, spec=view)
                    self.on_event(RunEvent.TRIAL_DONE, spec=view, result=result)
        return outcomes

    def _materialize(self, spec: TrialSpec) -> None:
        """A trial that ran on another host: its files, from the store, under this host's runs dir."""
        if self.store.shared:
            fetch_trial_artifacts(self.store, spec.trial_id, self.config.runs_dir / spec.run_id / spec.trial_id)
