"""Imported trials join a version's sweep (issue 33: `qa run TASK --trials-from PATH...`). Nothing is re-run.

The folders given are read (core/readers), the trials whose task name is this task's are kept, each is
recorded as a solver trial of the loaded version (`source = imported`, its id derived from where it was read,
so importing again adds nothing), and its neutral record is written beside it for the cross-trial rules. A
trial whose recorded Harbor checksum matches neither the task the user gave nor its snapshot ran another
version: it is stored with `provenance.stale`, said in the report, and counted only with `count_stale`.
The checksum is computed on the user's directory too (read only): a version snapshot leaves out files that
Harbor hashes (qa-expected.json, caches), so the snapshot alone would call every trial stale.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import structlog

from envqa.agents.imported_trace import write_imported_trace
from envqa.core.import_match import task_aliases
from envqa.core.imported import ImportBatch, ImportedTrial, ImportProblem
from envqa.core.imported_trials import as_trial_result, imported_trial_id, is_stale, write_sidecar
from envqa.core.layout import RunLayout
from envqa.core.models import TrialResult
from envqa.core.readers import iter_runs
from envqa.core.run_deps import RunDeps
from envqa.core.task_checksum import harbor_task_checksums
from envqa.probes.cross_trial.probe import per_test_table
from envqa.probes.cross_trial.qa import version_task_trials

log = structlog.get_logger(__name__)


@dataclass
class ImportedSweep:
    counted: list[TrialResult] = field(default_factory=list)  # join the version's sweep
    stale: list[TrialResult] = field(default_factory=list)  # ran another version: kept, not counted
    problems: list[ImportProblem] = field(default_factory=list)
    other_tasks: int = 0  # trials of other tasks in the folders (a dataset's job holds every task's)

    def public(self) -> dict:
        return {
            "counted": len(self.counted),
            "stale": len(self.stale),
            "other_tasks": self.other_tasks,
            "problems": [p.model_dump() for p in self.problems],
            "stale_note": (
                f"{len(self.stale)} imported trial(s) ran another version of the task (the recorded "
                f"checksum differs from the task on disk): kept, not counted (--count-stale counts "
                f"them)"
            )
            if self.stale
            else None,
        }


def _names(env, env_dir: str | None, snapshot: Path) -> set[str]:
    names = {env.name} | task_aliases(snapshot)
    if env_dir and Path(env_dir).is_dir():
        names |= task_aliases(Path(env_dir))
    return names


def _checksums(env_dir: str | None, snapshot: Path) -> set[str]:
    dirs = [snapshot] + ([Path(env_dir)] if env_dir and Path(env_dir).is_dir() else [])
    return {c for d in dirs for c in harbor_task_checksums(d)}  # every Harbor version's algorithm


def _stale(t: ImportedTrial, checksums: set[str]) -> bool:
    return bool(t.task_checksum) and bool(checksums) and all(is_stale(t, c) for c in checksums)


PROGRESS_EVERY = 1000  # trials between two progress log lines on a large import


def _read_with_progress(paths: list[str]) -> ImportBatch:
    """read_runs, with a log line every PROGRESS_EVERY trials (a large import shows it is moving)."""
    batch = ImportBatch()
    for item in iter_runs(paths):
        if isinstance(item, ImportedTrial):
            batch.trials.append(item)
            if len(batch.trials) % PROGRESS_EVERY == 0:
                log.info("sweep.importing", trials=len(batch.trials), problems=len(batch.problems))
        else:
            batch.problems.append(item)
    return batch


def import_trials(deps: RunDeps, run_id: str, env, env_dir: str | None) -> ImportedSweep:
    """Read `[sweep] trials_from`, record this task's trials as solver trials of `env.version`."""
    sw = deps.config.sweep
    out = ImportedSweep()
    if not sw.trials_from:
        return out
    batch = _read_with_progress(sw.trials_from)
    out.problems = batch.problems
    snapshot = deps.versions.path(env.version)
    names = _names(env, env_dir, snapshot)
    mine = [t for t in batch.trials if t.task_name in names or t.task_name.rsplit("/", 1)[-1] in names]
    out.other_tasks = len(batch.trials) - len(mine)
    checksums = _checksums(env_dir, snapshot) if any(t.task_checksum for t in mine) else set()
    layout = RunLayout(deps.config.runs_dir, run_id)
    for t in mine:
        stale = _stale(t, checksums)
        stored = deps.store.get_trial(imported_trial_id(t))
        if stored is None:
            trial_dir = layout.trial_dir(imported_trial_id(t))
            keep_files(trial_dir, t)
            stored = as_trial_result(t, run_id, env.version, stale=stale, artifacts_dir=str(trial_dir))
            deps.store.record_trial(stored)  # insert-once: a concurrent import of the same trial adds nothing
        (out.stale if stale and not sw.count_stale else out.counted).append(stored)
    log.info("sweep.imported", counted=len(out.counted), stale=len(out.stale), problems=len(out.problems))
    return out


def keep_files(trial_dir: Path, t: ImportedTrial) -> None:
    """The neutral record (the cross-trial rules read it back) and the trajectory and verifier output where the
    analyst model and the HTML report read a trial's."""
    write_sidecar(trial_dir, t)
    write_imported_trace(trial_dir, t)


def by_identity(results: list[TrialResult]) -> dict[str, list[TrialResult]]:
    """Imported trials grouped as the sweep groups qa's own: by model (the harness's agent/model)."""
    out: dict[str, list[TrialResult]] = {}
    for r in results:
        out.setdefault(r.model or "imported", []).append(r)
    return out


def cross_trial_section(deps: RunDeps, state, current: list[TrialResult]) -> dict | None:
    """The report's `cross_trial`: the per-test table (test x agent: failures, fails alone) of the current
    version's solver trials, and what was imported; None when the version has no solver trial."""
    if not any(t.agent == "solver" for t in current):
        return None
    env = deps.versions.load(state["version"])
    task = version_task_trials(env, current, include_stale=deps.config.sweep.count_stale)
    return {
        "tests": per_test_table(task),
        "imported": (state.get("sweep") or {}).get("imported"),
        "stale": [t.trial_id for t in current if t.provenance and t.provenance.stale],
    }
