"""The sweep's import (graphs/imported.py) on the real SQLite store and version store, no Docker: a task's trials
are recorded once as solver trials of the version (`source = imported`, provenance kept, purpose `imported` so
the replays leave them alone), a second import in another run adds nothing and counts the same trials, trials
of other tasks are left out, and a checksum of another version makes a trial stale unless --count-stale."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from envqa.core.config import QAConfig, load_config
from envqa.core.task_checksum import harbor_task_checksum
from envqa.demo.imported_runs import write_fixture_runs
from envqa.graphs.imported import import_trials
from envqa.store.db import Store
from envqa.store.versions import VersionStore

pytestmark = pytest.mark.fast
REPO = Path(__file__).resolve().parents[2]


@dataclass
class Deps:
    config: QAConfig
    store: Store
    versions: VersionStore


def _deps(tmp_path: Path, job: Path, **sweep) -> Deps:
    config = load_config(
        None,
        {
            "home": str(tmp_path / "qa-home"),
            "sweep.trials_from": [str(job)],
            **{f"sweep.{k}": v for k, v in sweep.items()},
        },
    )
    store = Store(config.db_path)
    return Deps(config=config, store=store, versions=VersionStore(config, store))


def test_the_sweep_imports_a_tasks_trials_once(tmp_path):
    runs = write_fixture_runs(tmp_path / "runs")
    task = tmp_path / "port-config"
    shutil.copytree(REPO / "examples" / "tb1-clean", task)
    for result in runs.harbor_job.glob("port-config__*/result.json"):  # these ran the version on disk
        result.write_text(json.dumps({**json.loads(result.read_text()), "task_checksum": harbor_task_checksum(task)}))
    deps = _deps(tmp_path, runs.harbor_job)
    info = deps.versions.snapshot(task, run_id="run-a")
    env = deps.versions.load(info.version)

    first = import_trials(deps, "run-a", env, str(task))
    assert (len(first.counted), len(first.stale), first.other_tasks) == (9, 0, 45)
    t = first.counted[0]
    assert (t.agent, t.source, t.purpose, t.env_version) == ("solver", "imported", "imported", info.version)
    assert t.model in {"claude-code/anthropic/claude-opus-4-1", "terminus-2/openai/gpt-5", "codex/openai/gpt-5-codex"}
    assert t.provenance.path.startswith(str(runs.harbor_job)) and not t.provenance.stale
    assert (Path(t.artifacts_dir) / "imported.json").is_file()
    copied = [r for r in first.counted if (Path(r.artifacts_dir) / "agent" / "trajectory.json").is_file()]
    assert len(copied) == 9  # the analyst and the HTML report read the trajectory where they read qa's own

    second = import_trials(deps, "run-b", env, str(task))
    assert sorted(r.trial_id for r in second.counted) == sorted(r.trial_id for r in first.counted)
    assert {r.run_id for r in second.counted} == {"run-a"}  # stored once, under the run that first imported it
    rows = deps.store._conn().execute("SELECT COUNT(*) AS n FROM trials WHERE source='imported'").fetchone()
    assert rows["n"] == 9


def test_another_versions_trials_are_stale_unless_counted(tmp_path):
    runs = write_fixture_runs(tmp_path / "runs")
    task = tmp_path / "hello-world"
    shutil.copytree(REPO / "examples" / "tb1-clean", task)
    deps = _deps(tmp_path, runs.harbor_job)
    env = deps.versions.load(deps.versions.snapshot(task, run_id="run-a").version)
    out = import_trials(deps, "run-a", env, str(task))
    assert (len(out.counted), len(out.stale)) == (0, 9) and "ran another version" in out.public()["stale_note"]
    assert all(r.provenance.stale for r in out.stale)
    counted = import_trials(_deps(tmp_path, runs.harbor_job, count_stale=True), "run-b", env, str(task))
    assert (len(counted.counted), len(counted.stale)) == (9, 0)
