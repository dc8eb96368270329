"""Readers of other harnesses' output: one entry, `read_runs(paths) -> ImportBatch`, that finds per folder
whether it is a Harbor trial/job or a `tb run` and reads it (formats: docs/guide/importing-runs.md).

`iter_runs` yields trials and problems one at a time, for callers that store or count as they go and do
not want every trial in memory at once; `read_runs` collects them.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from pathlib import Path

from envqa.core.defaults import MAX_DEPTH
from envqa.core.imported import ImportBatch, ImportedTrial, ImportProblem
from envqa.core.readers import harbor, terminal_bench
from envqa.core.readers.formats import format_of, register_format

__all__ = ["iter_runs", "read_runs", "register_format"]

# The built-in formats, most specific first (core/readers/formats.py): a Harbor trial folder (not a
# Harbor 1 job, which has results.json), a tb trial, a tb run, a Harbor job.
register_format(
    "harbor-trial",
    detect=lambda p: harbor.is_trial_dir(p) and not (p / "results.json").is_file(),
    read=lambda p, threshold: harbor.read_trial(p, job_name=p.parent.name, pass_threshold=threshold),
)
register_format("tb-trial", detect=terminal_bench.is_trial_dir, read=lambda p, _threshold: terminal_bench.read_trial(p))
register_format("tb-run", detect=terminal_bench.is_run_dir, read=lambda p, _threshold: terminal_bench.iter_run(p))
register_format(
    "harbor-job",
    detect=harbor.is_job_dir,
    read=lambda p, threshold: harbor.iter_job(p, pass_threshold=threshold),
)


def read_runs(paths: Iterable[Path | str], *, pass_threshold: float = 1.0) -> ImportBatch:
    batch = ImportBatch()
    for item in iter_runs(paths, pass_threshold=pass_threshold):
        if isinstance(item, ImportedTrial):
            batch.trials.append(item)
        else:
            batch.problems.append(item)
    return batch


def iter_runs(
    paths: Iterable[Path | str],
    *,
    pass_threshold: float = 1.0,
) -> Iterator[ImportedTrial | ImportProblem]:
    """Each path may be a Harbor trial, job or folder of jobs; a tb run, tb trial or folder of runs. A trial
    read twice (a copy of a run nested in another, a path given twice) is yielded once; with no model known, only
    when the folders name its job alike, since they are then all that tells two jobs apart. A job label (the group of
    trials with no model, core/readers/groups.py) that two job folders share names the first of them only."""
    seen: set[tuple[str | None, ...]] = set()
    label_owner: dict[str, str] = {}  # job label -> the job folder it names
    for item in _iter_paths(paths, pass_threshold):
        if isinstance(item, ImportedTrial):
            named_by = None if item.model else item.job_label  # with no model known, the folder is the job's name
            key = (item.source_format, item.agent, item.model, named_by, item.job_name, item.task_name, item.trial_name)
            if key in seen:
                continue
            seen.add(key)
            if item.job_label and label_owner.setdefault(item.job_label, item.job_path) != item.job_path:
                item.job_label = item.job_path  # another job folder holds this name: the path tells them apart
        yield item


def _iter_paths(paths: Iterable[Path | str], pass_threshold: float) -> Iterator[ImportedTrial | ImportProblem]:
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            yield ImportProblem(path=str(path), message="no such file or folder")
        elif not path.is_dir():
            yield ImportProblem(
                path=str(path), message="not a folder: give a Harbor job/trial folder or a tb run folder"
            )
        elif not (yield from _read_folder(path, pass_threshold, 0)):
            yield ImportProblem(path=str(path), message="no Harbor job or trial, and no tb run, found in this folder")


def _read_folder(path: Path, threshold: float, depth: int) -> Generator[ImportedTrial | ImportProblem, None, bool]:
    """Yield what the folder holds; return whether it held anything we read."""
    fmt = format_of(path)
    if fmt is not None:
        yield from fmt.read(path, threshold)
        return True
    if depth >= MAX_DEPTH:
        return False
    found = False
    try:
        children = sorted(p for p in path.iterdir() if p.is_dir())
    except OSError as e:
        yield ImportProblem(path=str(path), message=f"unreadable folder: {e.strerror or e}")
        return True
    for child in children:
        found = (yield from _read_folder(child, threshold, depth + 1)) or found
    return found
