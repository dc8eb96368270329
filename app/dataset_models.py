"""The dataset run's output contract (`qa run PATH... --json`, the dataset HTML report, `--format markdown|github`).

One pydantic model that every reader of a dataset run derives from, so the JSON, the HTML triage table and the
CI summary cannot drift apart. `schema_version` changes only when a field changes meaning or goes away.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from envqa.core.verdicts import combined_exit, exit_code

DATASET_SCHEMA_VERSION = 1


class TaskFinding(BaseModel):
    """One finding of one task, as the dataset views show it (the task's own report has the full evidence)."""

    rule: str
    label: str | None = None
    severity: str | None = None
    summary: str = ""
    file: str | None = None  # relative to the task directory, when the finding has a location
    line: int | None = None
    evidence: str = ""


class TaskProposal(BaseModel):
    """A revision proposed for the task: who proposed it, whether the gate passed it, what happened to it."""

    version: str | None = None
    proposer: str | None = None  # the fixer or reviser that wrote it
    addresses: list[str] = Field(default_factory=list)  # rule ids it claims to fix
    gate: str | None = None  # passed | failed | None (not gated yet)
    state: str | None = None  # awaiting_approval | approved | rejected | adopted | dropped
    approved_by: str | None = None
    diff: str = ""


class TaskRow(BaseModel):
    """One task of the dataset: its run, its verdict and exit code (2 for a task that could not be loaded)."""

    path: str
    name: str
    run_id: str | None = None  # None when the task never started (malformed, or filtered out before a run)
    verdict: str | None = None  # clean | findings | out_of_band | incomplete | awaiting_approval | invalid
    exit_code: int
    error: str | None = None  # why the task could not run (its InputError / InfraError message)
    findings: list[TaskFinding] = Field(default_factory=list)
    pass_at_1: float | None = None
    band: tuple[float, float] | None = None
    in_band: bool | None = None
    # issue 33: pass@1 per agent/model (qa's solver models and imported agent/model pairs), with its Wilson interval
    agents: dict[str, dict] = Field(default_factory=dict)
    proposals: list[TaskProposal] = Field(default_factory=list)
    report_html: str | None = None  # the task's own report
    seconds: float | None = None


class DatasetConvention(BaseModel):
    """A rule that warns on most of the dataset's tasks, said once (app/dataset_conventions.py): its warnings are
    not in the rows' findings; `task_names` says which tasks, `example` is the first task's finding."""

    rule: str
    label: str | None = None
    severity: str = "warning"
    tasks: int  # how many tasks it warns on
    of: int  # the dataset's tasks
    summary: str = ""
    task_names: list[str] = Field(default_factory=list)
    example: TaskFinding | None = None


class DatasetSummary(BaseModel):
    tasks: int
    by_verdict: dict[str, int] = Field(default_factory=dict)
    by_rule: dict[str, int] = Field(default_factory=dict)  # rule id -> number of tasks it fired on
    seconds: float | None = None


class DatasetReport(BaseModel):
    """What `qa run PATH... --json` prints: one object, the dataset's exit code in `exit_code`."""

    schema_version: int = DATASET_SCHEMA_VERSION
    dataset_run_id: str
    paths: list[str] = Field(default_factory=list)  # what the user passed
    tasks: list[TaskRow] = Field(default_factory=list)
    # rules that warn on most tasks, said once here instead of on each row (app/dataset_conventions.py)
    conventions: list[DatasetConvention] = Field(default_factory=list)
    summary: DatasetSummary
    exit_code: int
    report_html: str | None = None


def summarize(rows: list[TaskRow], seconds: float | None = None, unrun: str = "unknown") -> DatasetSummary:
    """Counts per verdict (`unrun` for a task with none yet) and per rule (tasks a rule fired on above `info`,
    most first): the one summary the JSON, the HTML report and `qa serve` show."""
    by_verdict: dict[str, int] = {}
    by_rule: dict[str, int] = {}
    for r in rows:
        by_verdict[r.verdict or unrun] = by_verdict.get(r.verdict or unrun, 0) + 1
        for rule in {f.rule for f in r.findings if f.severity != "info"}:
            by_rule[rule] = by_rule.get(rule, 0) + 1
    return DatasetSummary(
        tasks=len(rows),
        by_verdict=by_verdict,
        seconds=seconds,
        by_rule=dict(sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))),
    )


def dataset_exit_code(rows: list[TaskRow]) -> int:
    """0 only when every task is clean or in band; 1 when any task has findings (or is out of band or could not
    be loaded); 4 when none has findings and some await approval; 3 when none of those and some could not finish."""
    return combined_exit([r.exit_code for r in rows] + [exit_code(r.verdict) for r in rows])
