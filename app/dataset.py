"""`qa run PATH...` (issue 25): which tasks the paths name, and one task's run -> its row of the dataset report.

A PATH is a task (task.toml: Harbor; task.yaml: Terminal-Bench 1; spec.md only: generated first, as today) or a
dataset: a folder with none of those whose subfolders are the tasks (formats may mix). A subfolder that does not
load is still a task of the dataset: its row says why (verdict "invalid", exit code 2) and the others run. Filters
work like Harbor's: `-t GLOB` keeps the tasks whose name (or path as given) matches any include, `-x GLOB` drops
those that match any exclude, `--max-tasks N` keeps the first N (in name order) after that.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from envqa.app.dataset_conventions import lift_conventions
from envqa.app.dataset_models import DatasetReport, TaskRow, dataset_exit_code, summarize
from envqa.app.dataset_rows import task_row
from envqa.core.environment import IGNORED_DIRS, load_environment
from envqa.core.errors import EnvQAError, InputError

TASK_MARKERS = ("task.toml", "task.yaml", "spec.md")


class DatasetInterrupted(Exception):
    """Ctrl-C (or a lost worker pool, a stalled queue) stopped the dataset; `--resume` finishes it."""


@dataclass
class Task:
    """One task of the dataset: where it is, its name, and why it cannot run (None when it loads)."""

    path: Path  # resolved
    name: str
    error: str | None = None


def is_task_dir(path: Path) -> bool:
    return path.is_dir() and any((path / m).exists() for m in TASK_MARKERS)


def is_dataset_dir(path: Path) -> bool:
    """A folder that is not a task itself and has a task among its subfolders (then each subfolder is a task: one
    that does not load is a row with its error). A task folder that lost its task.toml stays today's error."""
    return path.is_dir() and not is_task_dir(path) and any(is_task_dir(p) for p in task_subdirs(path))


def task_subdirs(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name not in IGNORED_DIRS)


def is_dataset_run(paths: list[Path]) -> bool:
    """Several paths, or one folder of tasks: a dataset run. One task (or a bad path) is today's `qa run`."""
    return len(paths) > 1 or (len(paths) == 1 and is_dataset_dir(paths[0]))


def check_task(path: Path) -> str | None:
    """Why the task cannot run (its InputError's message), or None. Spec-only folders are checked by the run."""
    from envqa.agents.generator import is_spec_dir

    if not path.exists():
        return str(InputError(str(path), "no such directory"))
    try:
        if not is_spec_dir(path):
            load_environment(path)
    except EnvQAError as e:
        return str(e)
    return None


def discover(
    paths: list[Path], include: list[str] | None = None, exclude: list[str] | None = None, max_tasks: int | None = None
) -> list[Task]:
    """The tasks the paths name, filtered; each loaded once here so a malformed one is a row, not a crash."""
    found: dict[Path, Task] = {}
    for given in paths:
        candidates = task_subdirs(given) if is_dataset_dir(given) else [given]
        for c in candidates:
            resolved = c.resolve() if c.exists() else Path(os.path.abspath(c))
            if resolved in found:
                continue
            if not _matches(c, include, exclude):
                continue
            found[resolved] = Task(path=resolved, name=c.name or resolved.name, error=check_task(c))
    tasks = sorted(found.values(), key=lambda t: (t.name, str(t.path)))
    if max_tasks is not None:
        tasks = tasks[:max_tasks]
    return tasks


def _matches(path: Path, include: list[str] | None, exclude: list[str] | None) -> bool:
    keys = (path.name, path.as_posix())
    if include and not any(fnmatch(k, g) for g in include for k in keys):
        return False
    return not (exclude and any(fnmatch(k, g) for g in exclude for k in keys))


def default_jobs() -> int:
    """Tasks in flight at once: 2 per core (a task's graph mostly waits on its containers), at most one per
    1.5 GB of available memory (an image scan and the trial containers of one task), and at least 1."""
    cores = os.cpu_count() or 1
    try:
        mem_gb = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError):
        mem_gb = 4.0
    return max(1, min(2 * cores, int(mem_gb / 1.5)))


# rows ------------------------------------------------------------------------------------------------------------
def invalid_row(task: Task, message: str, run_id: str | None = None, seconds: float | None = None) -> TaskRow:
    return TaskRow(
        path=str(task.path),
        name=task.name,
        run_id=run_id,
        verdict="invalid",
        exit_code=2,
        error=message,
        seconds=seconds,
    )


def incomplete_row(task: Task, run_id: str | None, message: str, seconds: float | None = None) -> TaskRow:
    return TaskRow(
        path=str(task.path),
        name=task.name,
        run_id=run_id,
        verdict="incomplete",
        exit_code=3,
        error=message,
        seconds=seconds,
    )


def row_from_report(task: Task, report: dict, seconds: float | None) -> TaskRow:
    """A finished (or approval-waiting) run's report -> its row (app/dataset_rows.py: the mapping every view uses)."""
    return task_row(str(task.path), task.name, report.get("run_id"), report, seconds, report.get("report_html"))


def build_report(
    dataset_id: str, paths: list[str], rows: list[TaskRow], seconds: float | None, report_html: str | None = None
) -> DatasetReport:
    summary = summarize(rows, seconds)  # the rows as run: by_rule still counts a convention's tasks
    shown, conventions = lift_conventions(rows)
    return DatasetReport(
        dataset_run_id=dataset_id,
        paths=paths,
        tasks=shown,
        conventions=conventions,
        summary=summary,
        exit_code=dataset_exit_code(rows),
        report_html=report_html,
    )
