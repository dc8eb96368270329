"""`qa lint DATASET_DIR`: every task of a folder of tasks linted, as one dataset report (issue 52).

A folder that is no task itself and has tasks among its subfolders is a dataset (app/dataset.py `is_dataset_dir`,
the same reading as `qa run`): each subfolder is linted as `qa lint TASK` lints it, and the rows go through the
dataset report's one builder (`build_report`), so a rule that warns on most tasks is a convention said once
(app/dataset_conventions.py), exactly as in a `qa run` over the dataset. A subfolder that does not load is a row
with its error (exit 2 for it); the dataset's exit code combines the rows' (`dataset_exit_code`).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from envqa.app.dataset import build_report, task_subdirs
from envqa.app.dataset_models import DatasetReport, TaskRow
from envqa.app.dataset_rows import SEVERITY_RANK, task_finding
from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.core.models import Severity
from envqa.probes.static.task_schema import lint_findings

LINT_ID = "lint"  # the report's dataset_run_id: a lint is not stored, it has no run id


def lint_row(path: Path, root_agent: bool, unpinned_base: bool) -> TaskRow:
    try:
        env = load_environment(path, lint=True)
    except InputError as e:
        return TaskRow(path=str(path), name=path.name, verdict="invalid", exit_code=2, error=str(e))
    findings = sorted(
        lint_findings(env, root_agent, unpinned_base), key=lambda f: SEVERITY_RANK.get(str(f.severity), 4)
    )
    serious = any(f.severity != Severity.INFO for f in findings)
    return TaskRow(
        path=str(path),
        name=path.name,
        verdict="findings" if serious else "clean",
        exit_code=1 if serious else 0,
        findings=[task_finding(f.public()) for f in findings],
    )


def lint_dataset(root: Path, root_agent: bool = False, unpinned_base: bool = False) -> DatasetReport:
    rows = [lint_row(p, root_agent, unpinned_base) for p in task_subdirs(root)]
    return build_report(LINT_ID, [str(root)], rows, None)


def print_lint_dataset(report: DatasetReport, console: Console) -> None:
    """Per task its findings above info (a convention's left out), then the conventions and the counts."""
    for row in report.tasks:
        shown = [f for f in row.findings if f.severity != "info"]
        if row.error:
            console.print(f"{escape(row.name)}: [red]invalid[/]: {escape(row.error)}", soft_wrap=True)
        for f in shown:
            where = f":{f.file}" + (f":{f.line}" if f.line else "") if f.file else ""
            console.print(
                f"{escape(row.name)}{escape(where)}: {f.rule} ({f.severity}): {escape(f.summary)}", soft_wrap=True
            )
    for c in report.conventions:
        console.print(
            f"{escape(c.summary)} (its {c.severity}s are left out above; --json names the tasks)", soft_wrap=True
        )
    counts = ", ".join(f"{n} {v}" for v, n in sorted(report.summary.by_verdict.items()))
    infos = sum(f.severity == "info" for r in report.tasks for f in r.findings)
    console.print(f"{report.summary.tasks} tasks: {counts}; {infos} info notes not shown; exit {report.exit_code}")
