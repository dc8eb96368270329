"""Artifacts on disk in a Harbor-like layout, one directory per trial under the run directory:

<runs_dir>/<run_id>/report.json
<runs_dir>/<run_id>/<trial_id>/result.json
<runs_dir>/<run_id>/<trial_id>/agent/            (agent logs; trajectory.json for model agents)
<runs_dir>/<run_id>/<trial_id>/verifier/test-stdout.txt, reward.txt | reward.json
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from envqa.core.models import TrialResult


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file and rename, so a crash never leaves half a file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


class RunLayout:
    def __init__(self, runs_dir: Path, run_id: str):
        self.root = Path(runs_dir) / run_id

    def trial_dir(self, trial_id: str) -> Path:
        d = self.root / trial_id
        (d / "agent").mkdir(parents=True, exist_ok=True)
        (d / "verifier").mkdir(parents=True, exist_ok=True)
        return d

    def write_result(self, result: TrialResult) -> Path:
        """result.json: an export for people and other tools (Harbor's layout). The store's row is the
        result; nothing in qa reads this file back."""
        path = self.trial_dir(result.trial_id) / "result.json"
        write_atomic(path, result.model_dump_json(indent=2))
        return path

    def write_report(self, report: dict) -> Path:
        """report.json: an export of the report the store holds (runs.report_json, written just before);
        nothing in qa reads this file back."""
        path = self.root / "report.json"
        write_atomic(path, json.dumps(report, indent=2))
        return path
