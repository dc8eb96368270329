"""Who ran a `tb run`: the agent and model of its trials, from `run_metadata.json`, else from the folder name.

Leaderboard submissions name their folder `<date>_<agent>_<model>` (e.g. `20250923_droid_claude-4-1-opus`)
and often record `agent_name` with `model_name: null`, or no `run_metadata.json` at all. Pass rates are grouped
by agent/model, so a missing model would merge different models of one agent into one group: the folder name
fills what the metadata lacks, and the trial says which source each part came from, so the output can say it.
Where neither names the model, the run is the group, named from its folders (core/readers/groups.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from envqa.core.readers.groups import job_label

SUBMISSION = re.compile(r"^(?P<date>\d{8})_(?P<agent>[A-Za-z0-9.\-]+)_(?P<model>[A-Za-z0-9.\-_]+)$")
ANCESTORS = 3  # a run folder sits at most this many levels below the submission folder that names it
UNKNOWN = "unknown"


class RunIdentity(BaseModel):
    """The run id and who ran it; `*_source` is "metadata", "folder-name" or None (not known)."""

    model_config = ConfigDict(extra="ignore")

    run_id: str = ""
    agent_name: str = UNKNOWN
    model_name: str | None = None
    agent_source: str | None = None
    model_source: str | None = None
    run_path: str = ""  # the run's folder
    run_label: str = ""  # the run's name from its folders: its group when the model is not known

    @property
    def known(self) -> bool:
        return self.agent_source is not None


def folder_identity(run_dir: Path) -> tuple[str, str] | None:
    """(agent, model) from the nearest folder named `<date>_<agent>_<model>`, the run folder first."""
    for folder in [run_dir, *run_dir.parents][: ANCESTORS + 1]:
        m = SUBMISSION.match(folder.name)
        if m:
            return m.group("agent"), m.group("model")
    return None


def identity(run_dir: Path, metadata: dict | None) -> RunIdentity:
    """Metadata first, the folder name for what it leaves out (agent or model)."""
    meta = metadata or {}
    agent = meta.get("agent_name") if isinstance(meta.get("agent_name"), str) and meta.get("agent_name") else None
    model = meta.get("model_name") if isinstance(meta.get("model_name"), str) and meta.get("model_name") else None
    named = folder_identity(run_dir)
    run_id = meta.get("run_id") if isinstance(meta.get("run_id"), str) and meta.get("run_id") else run_dir.name
    out = RunIdentity(run_id=run_id, run_path=str(run_dir), run_label=job_label(run_dir))
    if agent:
        out.agent_name, out.agent_source = agent, "metadata"
    elif named:
        out.agent_name, out.agent_source = named[0], "folder-name"
    if model:
        out.model_name, out.model_source = model, "metadata"
    elif named:
        out.model_name, out.model_source = named[1], "folder-name"
    return out
