"""Trials that other harnesses ran (Harbor jobs, `tb run` folders), in one format-neutral shape.

The readers (core/readers/) map each harness's own files onto these models; everything after them (the
cross-trial rules, `qa analyze`, `qa run --trials-from`, the store) sees only this shape, so a third harness
needs a reader and nothing else. Field names follow our TrialResult where the meaning is the same.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from envqa.core.models import Outcome, StepResult

SourceFormat = Literal["harbor", "terminal-bench"]
TestStatus = Literal["passed", "failed", "error", "skipped"]


class TestOutcome(BaseModel):
    """One test of the verifier, as the harness reported it (ctrf, pytest -rA summary, tb parser_results)."""

    __test__ = False  # not a pytest class

    name: str  # the test's id as the harness wrote it, e.g. "test_outputs.py::test_csv_header"
    status: TestStatus
    message: str = ""  # the failure's text (assertion, diff), trimmed; "" when it passed


class TrajectoryStep(BaseModel):
    """One step of what the agent did: an ATIF step, or one command of a tb session. Ids are the source's own
    (ATIF step_id; 1-based line order for tb commands) so that a finding can cite them."""

    step_id: int
    source: str = "agent"  # "agent" | "user" | "system" (ATIF's step source)
    message: str = ""  # what the agent said
    commands: list[str] = Field(default_factory=list)  # what it ran (tool-call arguments, typed keystrokes)
    observation: str = ""  # what came back, trimmed
    trial_step: str | None = None  # multi-step Harbor trials: the [[steps]] name (each step's ATIF ids restart at 1)


class ImportedTrial(BaseModel):
    """One trial of one agent on one task, as another harness recorded it."""

    source_format: SourceFormat
    path: str  # the trial's folder (or the run folder for tb runs written with run-level files only)
    trial_name: str  # unique within its job/run, e.g. "hello-world__AbC12de" or "hello-world.1-of-5"
    job_name: str = ""  # Harbor job / tb run id
    job_path: str = ""  # the job's (tb: the run's) folder, when read from one
    job_label: str = ""  # the job's name from its folders (core/readers/groups.py): the group when no model is known
    task_name: str  # Harbor task_name / tb task_id: what matching to a task on disk uses
    task_checksum: str | None = None  # Harbor's task checksum, when recorded
    instruction: str = ""  # the task's instruction as the harness recorded it (tb TrialResults); "" where none
    agent: str  # the agent's name (e.g. "claude-code", "terminus-2", "oracle")
    model: str | None = None  # the model it ran on, e.g. "anthropic/claude-opus-4-1"
    agent_source: str | None = None  # where `agent` came from: "metadata" | "folder-name" | None (the record)
    model_source: str | None = None  # where `model` came from: "metadata" | "config" | "folder-name" | None
    attempt: int | None = None  # k of a -k/--n-attempts run, when the source says
    outcome: Outcome  # pass / fail / infra (infra never counts in a pass rate)
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)  # reward.json keys, when several
    infra_class: str | None = None  # why infra: agent-never-ran, test-timeout, parse-error, install-failed, ...
    error_message: str | None = None  # the harness's exception or failure mode text
    agent_timed_out: bool = False  # counted as its verifier says (a timed-out agent with a passing verifier passed)
    tests: list[TestOutcome] = Field(default_factory=list)  # per-test outcomes; [] when the source has none
    verifier_output: str = ""  # the tail of the verifier's stdout (tests.log / test-stdout.txt)
    steps: list[TrajectoryStep] = Field(default_factory=list)  # [] when no trajectory was recorded
    step_results: list[StepResult] = Field(default_factory=list)  # multi-step tasks: one per step
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @property
    def agent_model(self) -> str:
        """The group pass rates count in: the agent plus the model it ran; with no model known, the agent in its
        job (`agentx@agentx-model-a__0.40`), so two jobs of one agent on two unnamed models stay two groups."""
        if self.model:
            return f"{self.agent}/{self.model}"
        return f"{self.agent}@{self.job_label}" if self.job_label else self.agent

    @property
    def group_rule(self) -> str:
        """Which rule named the group: "agent+model" (the model is known) or "job folder"."""
        return "job folder" if not self.model and self.job_label else "agent+model"


class ImportedJob(BaseModel):
    """What a harness counted for one job (Harbor's JobResult stats): says whether it finished; None where the
    file does not say."""

    path: str  # the job's folder
    label: str  # the job's name (its group's, when the model is unknown)
    n_total_trials: int | None = None
    n_completed_trials: int | None = None
    n_errored_trials: int | None = None
    n_running_trials: int | None = None
    n_pending_trials: int | None = None
    n_cancelled_trials: int | None = None
    n_retries: int | None = None
    stats_names: str = "none"  # which JobStats names the file used: "0.6.2+" | "before 0.6.2" | "none"

    @property
    def unfinished(self) -> bool:
        return bool(self.n_running_trials or self.n_pending_trials)


class ImportProblem(BaseModel):
    """A file that could not be read. The rest of the import goes on; the problem is reported by name."""

    path: str
    message: str  # e.g. "truncated JSON at line 3", "unknown schema version 9.0", "no result.json"
    lost_trial: bool = False  # a trial's own record was unreadable and nothing else holds it: counted unreadable


class ImportBatch(BaseModel):
    """What one reader call returns: the trials it could read, and the files it could not."""

    trials: list[ImportedTrial] = Field(default_factory=list)
    problems: list[ImportProblem] = Field(default_factory=list)
