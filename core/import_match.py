"""Imported trials matched to the tasks on disk, by name within a dataset (issue 33).

A trial names its task as its harness knew it: Harbor's `task_name` (the task folder's name, or `[task] name`
of task.toml, possibly `org/name`), Terminal-Bench's `task_id` (the folder's name). A task on disk answers to
its folder name and, for Harbor, to its `[task] name` and that name's last part. Harbor also records the task's
checksum: a trial whose checksum differs from the task on disk ran another version, and is marked stale (kept,
shown, not counted unless the user says so).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from envqa.core.imported import ImportedTrial
from envqa.core.imported_trials import is_stale
from envqa.core.task_checksum import harbor_task_checksums

TASK_FILES = ("task.toml", "task.yaml", "task.yml")


def is_task_dir(path: Path) -> bool:
    return any((path / f).is_file() for f in TASK_FILES)


def task_aliases(task_dir: Path) -> set[str]:
    """The names a trial may call this task by."""
    names = {task_dir.name}
    toml = task_dir / "task.toml"
    if toml.is_file():
        try:
            name = (tomllib.loads(toml.read_text()).get("task") or {}).get("name")
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            name = None
        if isinstance(name, str) and name:
            names |= {name, name.rsplit("/", 1)[-1]}
    return names


def dataset_tasks(paths: list[Path]) -> dict[str, Path]:
    """alias -> task folder, for task folders and folders of task folders."""
    out: dict[str, Path] = {}
    for path in paths:
        dirs = [path] if is_task_dir(path) else sorted(p for p in path.iterdir() if p.is_dir() and is_task_dir(p))
        for d in dirs:
            for alias in task_aliases(d):
                out.setdefault(alias, d)
    return out


@dataclass
class TaskMatch:
    """One task's imported trials: those that ran this version, and those that ran another (stale)."""

    task_dir: Path | None
    current: list[ImportedTrial] = field(default_factory=list)
    stale: list[ImportedTrial] = field(default_factory=list)


@dataclass
class Matching:
    tasks: dict[str, TaskMatch] = field(default_factory=dict)  # by the task's folder name (or the trial's task)
    unmatched: dict[str, int] = field(default_factory=dict)  # a trial's task name no task on disk answers to

    def stale_notes(self) -> list[str]:
        return [
            f"{name}: {len(m.stale)} imported trial(s) ran another version of the task (the recorded checksum "
            f"differs from the task on disk): kept, not counted (--count-stale counts them)"
            for name, m in sorted(self.tasks.items())
            if m.stale
        ]


def match_trials(trials: list[ImportedTrial], tasks: dict[str, Path] | None) -> Matching:
    """Group trials by task. With `tasks` (alias -> folder), by the folder each name answers to, with stale
    trials apart; without, by the trials' own task names (nothing to compare a checksum with)."""
    out = Matching()
    checksums: dict[Path, set[str]] = {}
    for t in trials:
        if tasks is None:
            out.tasks.setdefault(t.task_name, TaskMatch(task_dir=None)).current.append(t)
            continue
        task_dir = tasks.get(t.task_name) or tasks.get(t.task_name.rsplit("/", 1)[-1])
        if task_dir is None:
            out.unmatched[t.task_name] = out.unmatched.get(t.task_name, 0) + 1
            continue
        if t.task_checksum and task_dir not in checksums:
            checksums[task_dir] = harbor_task_checksums(task_dir)  # under every Harbor version's algorithm
        match = out.tasks.setdefault(task_dir.name, TaskMatch(task_dir=task_dir))
        known = checksums.get(task_dir) or set()
        stale = bool(known) and all(is_stale(t, c) for c in known)
        (match.stale if stale else match.current).append(t)
    return out
