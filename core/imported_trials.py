"""An imported trial as a solver trial of a version (issue 33): its stable id, its TrialResult, and its sidecar.

The id is derived from where the trial was read (the source format, its folder, its trial name), never from
the run that imported it: importing the same files again, in this run or another, names the same trial, and
the store's insert-once makes the second import add nothing. The TrialResult is a `solver` trial whose model
is the harness's agent/model identity (what pass rates are grouped by) with `source = "imported"` and the
harness's own record in `provenance`. The neutral trial itself (tests, failure texts, steps) is kept beside it
as `imported.json` in the trial's folder, which is what the cross-trial rules read back.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from envqa.core.imported import ImportedTrial
from envqa.core.models import Outcome, Provenance, TrialResult

SIDECAR = "imported.json"


def imported_trial_id(t: ImportedTrial) -> str:
    """Stable across runs and re-imports: the source format, the trial's absolute folder, its trial name."""
    key = f"{t.source_format}|{os.path.abspath(t.path)}|{t.trial_name}"
    return f"imported-{hashlib.sha256(key.encode()).hexdigest()[:16]}"


def is_stale(t: ImportedTrial, checksum_on_disk: str | None) -> bool:
    """The harness recorded a checksum and the task on disk has another one: it ran another version."""
    if not t.task_checksum or not checksum_on_disk:
        return False
    return t.task_checksum.removeprefix("sha256:") != checksum_on_disk.removeprefix("sha256:")


def as_trial_result(
    t: ImportedTrial, run_id: str, env_version: str, *, stale: bool = False, artifacts_dir: str | None = None
) -> TrialResult:
    extra = {k: v for k, v in (("started_at", t.started_at), ("finished_at", t.finished_at)) if v is not None}
    return TrialResult(
        trial_id=imported_trial_id(t),
        run_id=run_id,
        env_version=env_version,
        agent="solver",
        model=t.agent_model,
        purpose="imported",  # not "sweep": the replays (solver_passes, the gate) re-run only qa's own passes
        outcome=t.outcome,
        reward=t.reward,
        rewards=t.rewards,
        error_class=t.infra_class if t.outcome == Outcome.INFRA else None,
        error_message=t.error_message,
        agent_timed_out=t.agent_timed_out,
        step_results=t.step_results,
        artifacts_dir=artifacts_dir,
        source="imported",
        provenance=Provenance(
            format=t.source_format,
            path=t.path,
            trial_name=t.trial_name,
            job_name=t.job_name,
            task_name=t.task_name,
            agent=t.agent,
            model=t.model,
            task_checksum=t.task_checksum,
            stale=stale,
        ),
        **extra,
    )


def write_sidecar(trial_dir: str | Path, t: ImportedTrial) -> None:
    path = Path(trial_dir) / SIDECAR
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(t.model_dump_json())
    tmp.replace(path)  # never half-written


def read_sidecar(trial_dir: str | Path | None) -> ImportedTrial | None:
    if not trial_dir:
        return None
    path = Path(trial_dir) / SIDECAR
    if not path.is_file():
        return None
    return ImportedTrial.model_validate_json(path.read_text())
