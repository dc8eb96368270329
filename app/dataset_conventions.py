"""A dataset's conventions: a rule that warns on most of a dataset's tasks is said once, for the dataset.

When one rule's warnings are on more than DATASET_CONVENTION_SHARE of a dataset's tasks (and on at least
DATASET_CONVENTION_MIN_TASKS), they are the way this dataset is written (every task installs unpinned packages),
not one task's flaw: a per-task list of the same warning 123 times hides the finding a person should act on. So the
dataset report names the rule once ("unpinned-python-dependency on 123 of 134 tasks: a convention of this
dataset"), lists the tasks by name and keeps the first task's finding as its example, and the rule's warnings leave
the rows' finding lists (their top finding, the markdown details, the HTML table). Choices, and why:
- only warnings are lifted: an error or a critical finding of the same rule stays on its task (a convention never
  hides something that cannot be read two ways), and an info finding is already a note;
- the denominator is every task of the dataset, invalid ones included: "most" is hard to reach by accident;
- nothing else changes: each task keeps its verdict and exit code, `summary.by_rule` still counts the rule, and
  each task's own report (qa show RUN_ID) keeps every finding with its evidence.
"""

from __future__ import annotations

from envqa.app.dataset_models import DatasetConvention, TaskFinding, TaskRow
from envqa.core.defaults import DATASET_CONVENTION_MIN_TASKS, DATASET_CONVENTION_SHARE

LIFTED = "warning"


def conventions_of(rows: list[TaskRow]) -> list[DatasetConvention]:
    """The rules whose warnings are on most of the rows' tasks, most widespread first."""
    tasks: dict[str, list[TaskRow]] = {}
    for row in rows:
        for rule in dict.fromkeys(f.rule for f in row.findings if f.severity == LIFTED):
            tasks.setdefault(rule, []).append(row)
    out = []
    for rule, on in tasks.items():
        if len(on) >= DATASET_CONVENTION_MIN_TASKS and len(on) > DATASET_CONVENTION_SHARE * len(rows):
            example = next(f for f in on[0].findings if f.rule == rule and f.severity == LIFTED)
            out.append(
                DatasetConvention(
                    rule=rule,
                    label=example.label,
                    severity=LIFTED,
                    tasks=len(on),
                    of=len(rows),
                    summary=f"{rule} on {len(on)} of {len(rows)} tasks: a convention of this dataset",
                    task_names=[r.name for r in on],
                    example=example.model_copy(update={"summary": f"{on[0].name}: {example.summary}"}),
                )
            )
    return sorted(out, key=lambda c: (-c.tasks, c.rule))


def lift_conventions(rows: list[TaskRow]) -> tuple[list[TaskRow], list[DatasetConvention]]:
    """The rows without their conventions' warnings, and the conventions (rows unchanged when there is none)."""
    found = conventions_of(rows)
    lifted = {c.rule for c in found}
    if not lifted:
        return rows, []

    def kept(f: TaskFinding) -> bool:
        return not (f.rule in lifted and f.severity == LIFTED)

    return [r.model_copy(update={"findings": [f for f in r.findings if kept(f)]}) for r in rows], found
