"""A Harbor job's own counts: `<job>/result.json` (JobResult without trial_results, as Job writes it).

The trials are read from the trial folders (core/readers/harbor.py); this file says what Harbor counted, so
`qa analyze` can say a job had not finished (trials still running or pending) or that it retried some. Names by
release (harbor/models/job/result.py, read from the wheels):
  - up to 0.6.1, JobStats: `n_trials` (completed), `n_errors`;
  - from 0.6.2, JobStats: `n_completed_trials`, `n_errored_trials`, `n_running_trials`, `n_pending_trials`,
    `n_cancelled_trials`, `n_retries`; JobResult also takes these under a `status` object (its validator moves
    them into `stats` where `stats` lacks them), and derives `n_pending_trials` as total - completed - running
    when absent; `updated_at` beside `started_at`/`finished_at`;
  - from 0.26, `schema_version` (Literal[1]; omitted means 1).
Harbor's own validator reads the old names as the new ones when the new are absent; so does this reader. A
broken file is one problem naming it; the trials of its job are read as ever.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from envqa.core.imported import ImportedJob, ImportProblem
from envqa.core.readers.common import ReadError, load_object

KNOWN_SCHEMA = 1
PROGRESS = ("n_completed_trials", "n_errored_trials", "n_running_trials", "n_pending_trials", "n_cancelled_trials")
LEGACY = {"n_trials": "n_completed_trials", "n_errors": "n_errored_trials"}  # harbor <= 0.6.1


class _Counts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    n_completed_trials: int | None = None
    n_errored_trials: int | None = None
    n_running_trials: int | None = None
    n_pending_trials: int | None = None
    n_cancelled_trials: int | None = None
    n_retries: int | None = None


class _JobResult(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_version: int = 1
    n_total_trials: int | None = None


def read_job(job_dir: Path, label: str = "") -> tuple[ImportedJob | None, ImportProblem | None]:
    """The job's counts; (None, None) when it has no result.json (a job folder copied without it)."""
    path = job_dir / "result.json"
    if not path.is_file():
        return None, None
    try:
        data = load_object(path)
        job = _JobResult.model_validate(data)
        if job.schema_version != KNOWN_SCHEMA:
            raise ReadError(path, f"unknown schema version {job.schema_version!r} (this reader knows JobResult 1)")
        counts, names = _counts(path, data)
    except ReadError as e:
        return None, ImportProblem(path=str(e.path), message=e.message)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return None, ImportProblem(path=str(path), message=f"not a Harbor JobResult: {where}: {first['msg']}")
    total = job.n_total_trials
    if counts.n_pending_trials is None and total is not None:  # as JobResult derives it
        counts.n_pending_trials = max(total - (counts.n_completed_trials or 0) - (counts.n_running_trials or 0), 0)
    return ImportedJob(
        path=str(job_dir), label=label or job_dir.name, n_total_trials=total, stats_names=names, **counts.model_dump()
    ), None


def _counts(path: Path, data: dict) -> tuple[_Counts, str]:
    """JobStats' counts, the old names read as the new where the new are absent, then `status`'s; and which
    names the file used ("0.6.2+", "before 0.6.2", "none")."""
    stats = data.get("stats")
    if stats is None:
        stats = {}
    if not isinstance(stats, dict):
        raise ReadError(path, "`stats` is not an object")
    merged = dict(stats)
    for old, new in LEGACY.items():
        if new not in merged and old in merged:
            merged[new] = merged[old]
    status = data.get("status")
    if isinstance(status, dict):
        for name in (*PROGRESS, "n_retries"):
            if name not in merged and name in status:
                merged[name] = status[name]
    if any(name in stats for name in PROGRESS) or isinstance(status, dict):
        names = "0.6.2+"
    elif any(name in stats for name in LEGACY):
        names = "before 0.6.2"
    else:
        names = "none"
    try:
        return _Counts.model_validate(merged), names
    except ValidationError as e:
        first = e.errors()[0]
        raise ReadError(path, f"not a Harbor JobStats: stats.{first['loc'][0]}: {first['msg']}") from None
