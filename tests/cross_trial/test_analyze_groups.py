"""`qa analyze` on tests/fixtures/harbor-groups (issue 53 items 1 and 2): the groups and the rule that named each,
in the JSON and the text; Harbor's counts for a job that had not finished; a broken job file loses only itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from envqa.app.analyze import analyze
from envqa.app.analyze_output import markdown, print_text
from envqa.core.config import load_config

pytestmark = pytest.mark.fast

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "harbor-groups"


def _doc(paths: list[Path], tmp_path: Path) -> dict:
    return analyze(paths, load_config(None, {"home": str(tmp_path / "qa-home")}), store=False)


def _text(doc: dict) -> str:
    console = Console(record=True, width=300)
    print_text(doc, console)
    return console.export_text()


def test_groups_say_which_rule_named_them_in_json_and_text(tmp_path):
    doc = _doc([FIXTURE], tmp_path)
    assert doc["problems"] == [] and doc["trials"] == 6
    groups = {g["group"]: (g["rule"], g["named_by"], g["job"], g["trials"]) for g in doc["groups"]}
    assert groups == {
        "agentx@agentx-model-a__0.40": ("job folder", "job folder", "agentx-model-a__0.40", 2),
        "agentx@agentx-model-b__0.10": ("job folder", "job folder", "agentx-model-b__0.10", 2),
        "agenty/provider-z/model-c": ("agent+model", "agent+model from config", None, 2),
    }
    rates = {t["task"]: t["agents"] for t in doc["tasks"]}["count-lines"]
    assert {name: (r["passes"], r["n"]) for name, r in rates.items()} == {
        "agentx@agentx-model-a__0.40": (1, 1),
        "agentx@agentx-model-b__0.10": (0, 1),  # apart, not pooled with model a into one agentx group
        "agenty/provider-z/model-c": (1, 1),
    }
    text = _text(doc)
    assert "group agentx@agentx-model-a__0.40: 2 trials (job folder agentx-model-a__0.40: no model recorded" in text
    assert "group agenty/provider-z/model-c: 2 trials (agent+model from config;" in text
    assert "job folder agentx-model-b__0.10" in markdown(doc)


def test_an_unfinished_job_is_said_with_harbors_counts(tmp_path):
    doc = _doc([FIXTURE], tmp_path)
    jobs = {j["label"]: j for j in doc["jobs"]}
    assert set(jobs) == {"agentx-model-a__0.40", "agentx-model-b__0.10", "agenty-named__0.50"}
    assert jobs["agentx-model-a__0.40"]["unfinished"] and jobs["agentx-model-a__0.40"]["stats_names"] == "0.6.2+"
    assert jobs["agentx-model-b__0.10"]["stats_names"] == "before 0.6.2"
    lines = [ln for ln in _text(doc).splitlines() if ln.startswith("job ")]
    assert lines == [
        "job agentx-model-a__0.40: Harbor's counts (4 trials): 2 completed, 0 errored, 1 running, 1 pending, "
        "0 cancelled, retried 1 (not finished: pass rates count the trials written so far)"
    ]  # the finished jobs say nothing


def test_a_broken_job_file_loses_only_itself(tmp_path):
    root = tmp_path / "runs"
    shutil.copytree(FIXTURE, root)
    broken = root / "agentx-model-a__0.40" / "jobs" / "2026-11-20__10-00-00" / "result.json"
    broken.write_text('{"stats": {"n_completed_trials": ')
    odd = root / "agentx-model-b__0.10" / "jobs" / "2026-11-20__11-00-00" / "result.json"
    odd.write_text(json.dumps({"stats": {"n_trials": {"nested": True}}}))
    doc = _doc([root], tmp_path)
    assert doc["trials"] == 6 and doc["unreadable_trials"] == 0
    assert {p["path"] for p in doc["problems"]} == {str(broken), str(odd)}
    assert {j["label"] for j in doc["jobs"]} == {"agenty-named__0.50"}
    assert len(doc["groups"]) == 3
    assert str(broken) in _text(doc)
