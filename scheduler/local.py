"""In-process trial executor: runs trial specs one after another in this process.

The graph talks to an executor, not to RQ, so the same graph runs embedded, on a worker fleet, or in a
test. Every executor honours the same contract: a spec whose trial is already recorded in the store is
not run again (trial ids are derived from specs), and each result is recorded exactly once.
"""

from __future__ import annotations

from typing import Callable, Protocol

from envqa.agents.trial import run_trial
from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.models import TrialResult, TrialSpec
from envqa.core.sandbox import SandboxBackend
from envqa.core.layout import RunLayout
from envqa.store.db import Store

EventSink = Callable[..., None]


class Executor(Protocol):
    def run(self, env: Environment, specs: list[TrialSpec]) -> list[TrialResult]: ...

    def run_probe_jobs(self, jobs: list) -> list:
        """Probes as jobs (envqa.scheduler.probe_job): list[ProbeJob] -> list[ProbeOutcome], in order."""


class LocalExecutor:
    def __init__(self, backend: SandboxBackend, config: QAConfig, store: Store, on_event: EventSink | None = None):
        self.backend, self.config, self.store = backend, config, store
        self.on_event = on_event or (lambda *a, **k: None)

    def run(self, env: Environment, specs: list[TrialSpec]) -> list[TrialResult]:
        results = []
        self.on_event("trials_queued", count=len(specs))
        for spec in specs:
            done = self.store.get_trial(spec.trial_id)
            if done is None:
                self.on_event("trial_start", spec=spec)
                layout = RunLayout(self.config.runs_dir, spec.run_id)
                done = run_trial(spec, env, self.backend, self.config, layout)
                self.store.record_trial(done)
            self.on_event("trial_done", spec=spec, result=done)
            results.append(done)
        return results

    def run_probe_jobs(self, jobs: list) -> list:
        from envqa.scheduler.probe_job import run_in_process

        return [run_in_process(job, self.backend, self.store, self.on_event) for job in jobs]
