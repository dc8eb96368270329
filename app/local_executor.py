"""The in-process executor: trials, probes and model calls run one after another in this process.

Used without Redis (`[scheduler] mode = "local"`, or no redis-server) and by tests. Same contract as every
executor (envqa.core.executor): a trial already recorded is not run again, a job's stored answer is reused,
each result is recorded exactly once.
"""

from __future__ import annotations

import structlog

from envqa.agents.trial import run_trial
from envqa.app.jobs import mark_queued, run_call_here, run_probe_in_process
from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.events import EventSink, RunEvent
from envqa.core.executor import Call, ProbeJob, ProbeOutcome, result_of
from envqa.core.layout import RunLayout
from envqa.core.models import TrialResult, TrialSpec
from envqa.core.sandbox import SandboxBackend
from envqa.core.statuses import CallStatus

log = structlog.get_logger(__name__)


class LocalExecutor:
    def __init__(self, backend: SandboxBackend, config: QAConfig, store, on_event: EventSink | None = None):
        self.backend, self.config, self.store = backend, config, store
        self.on_event = on_event or (lambda *a, **k: None)

    def run(self, env: Environment, specs: list[TrialSpec]) -> list[TrialResult]:
        results = []
        self.on_event(RunEvent.TRIALS_QUEUED, count=len(specs))
        for spec in specs:
            done = self.store.get_trial(spec.trial_id)
            if done is None:
                self.on_event(RunEvent.TRIAL_START, spec=spec)
                layout = RunLayout(self.config.runs_dir, spec.run_id)
                done = run_trial(spec, env, self.backend, self.config, layout)
                self.store.record_trial(done)
            self.on_event(RunEvent.TRIAL_DONE, spec=spec, result=done)
            results.append(done)
        return results

    def run_probe_jobs(self, jobs: list[ProbeJob]) -> list[ProbeOutcome]:
        return [run_probe_in_process(job, self.backend, self.store, self.on_event) for job in jobs]

    def run_call(self, call: Call, *, deadline_sec: float | None = None) -> dict:
        """In this process; a failure is recorded on the call's row and re-raised."""
        row = self.store.get_call(call.call_id)
        if row and row["status"] == CallStatus.DONE:
            return result_of(row)
        mark_queued(self.store, call)
        return run_call_here(self.store, call)

    def run_calls(self, calls: list[Call], *, deadline_sec: float) -> dict[str, dict]:
        """One after another here; a call that fails is recorded on its row and the others still run."""
        for call in calls:
            if mark_queued(self.store, call):
                try:
                    run_call_here(self.store, call)
                except Exception as e:  # noqa: BLE001 - recorded on its row; the others still run
                    log.info("call.failed", call=call.call_id, error=str(e)[:300])
        return {c.call_id: self.store.get_call(c.call_id) for c in calls}
