"""Which group a trial's pass rate counts in, when the record does not say the model.

Pass rates, the cross-trial rules and the report group trials by agent and model. Harbor jobs published by
others often record `model_name: null` (in `agent_info.model_info` and in every config), and `tb run` folders
may lack the model too, so grouping by agent alone would merge two jobs of one agent on two models into one
group. Their folders tell them apart: `<agent>-<model>__<score>/jobs/<timestamp>/`. So where the model is not
known the group is the job, named from its folder: the nearest folder, the job's own first, whose name is not a
container (`jobs`, `runs`) or a default job name (a timestamp, as Harbor's JobConfig and `tb run` write).

Two jobs of unknown model are never one group: when the naming folder holds several job folders, the job's own
name joins the label; `core/readers.iter_runs` reads a job whose label and trials another folder already gave
as a copy (read once), and names any other job folder claiming a taken label by its path. The readers name each
job once per reading (no cache across readings: a jobs folder gains siblings between two `qa analyze` runs).
"""

from __future__ import annotations

import re
from pathlib import Path

# harbor/models/job/config.py JobConfig.job_name default (`%Y-%m-%d__%H-%M-%S`); tb run ids have the same shape.
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}__\d{2}-\d{2}-\d{2}$")
CONTAINERS = frozenset({"jobs", "runs"})
ANCESTORS = 3  # the naming folder sits at most this many levels above the job folder


def _names_nothing(name: str) -> bool:
    return not name or name.lower() in CONTAINERS or bool(TIMESTAMP.match(name))


def job_label(job_dir: Path) -> str:
    """The job's name from its folder: `agentx-model-a__0.40` for `agentx-model-a__0.40/jobs/2026-11-20__10-00-00`;
    `<naming folder>/<job folder>` when the naming folder holds other folders beside the job's (two timestamps
    of one experiment); the job folder's own name when no folder above names anything."""
    for level, folder in enumerate([job_dir, *job_dir.parents][: ANCESTORS + 1]):
        if _names_nothing(folder.name):
            continue
        if level == 0:
            return folder.name
        return f"{folder.name}/{job_dir.name}" if _has_siblings(job_dir) else folder.name
    return job_dir.name or str(job_dir)


def _has_siblings(job_dir: Path) -> bool:
    try:
        return sum(1 for p in job_dir.parent.iterdir() if p.is_dir()) > 1
    except OSError:
        return False
