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
    task_name: str  # Harbor task_name / tb task_id: what matching to a task on disk uses
    task_checksum: str | None = None  # Harbor's task checksum, when recorded
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
        """The identity pass rates are grouped by: the agent plus the model it ran."""
        return f"{self.agent}/{self.model}" if self.model else self.agent


class ImportProblem(BaseModel):
    """A file that could not be read. The rest of the import goes on; the problem is reported by name."""

    path: str
    message: str  # e.g. "truncated JSON at line 3", "unknown schema version 9.0", "no result.json"
    lost_trial: bool = False  # a trial's own record was unreadable and nothing else holds it: counted unreadable


class ImportBatch(BaseModel):
    """What one reader call returns: the trials it could read, and the files it could not."""

    trials: list[ImportedTrial] = Field(default_factory=list)
    problems: list[ImportProblem] = Field(default_factory=list)
