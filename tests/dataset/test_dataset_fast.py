"""`qa run PATH...` over a dataset on the fake sandbox backend (the fast tier: no Docker, no Redis).

What must hold: which folders are tasks (Harbor and TB1 mixed, hidden folders skipped), Harbor-like filters, a
malformed task as a row of its own (invalid, exit 2, its error naming the file) while the others run, the
dataset's exit code, the store's dataset rows, `--task`, the text and markdown outputs, and `--resume` after an
interrupt running only what was not recorded.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envqa.app.cli import app
from envqa.app.dataset import discover, is_dataset_run
from envqa.app.dataset_run import DatasetInterrupted, DatasetPlan, DatasetRunner, create_dataset, new_dataset_id
from envqa.core.config import load_config
from envqa.store.db import Store
from qa_testkit import EXAMPLES
from tests.fake_tasks import use_backend

from .conftest import dataset_backend, make_dataset

pytestmark = pytest.mark.fast


@pytest.fixture
def backend():
    return dataset_backend()


@pytest.fixture
def qa_toml(tmp_path, monkeypatch, backend):
    path = tmp_path / "qa.toml"
    path.write_text(
        f'home = "{tmp_path / "home"}"\n[sandbox]\nbackend = "{use_backend(backend)}"\n[scheduler]\nmode = "local"\n'
    )
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("QA_SCHEDULER_MODE", raising=False)
    return path


def run_json(args: list[str], code: int) -> dict:
    res = CliRunner().invoke(app, [*args, "--json"])
    assert res.exit_code == code, res.output[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_discovery_mixes_formats_skips_hidden_and_filters(tmp_path):
    root = make_dataset(
        tmp_path / "ds",
        {"clean-wordfreq": "clean-wordfreq", "tb1-clean": "tb1-clean", "always-pass": "always-pass"},
        malformed=("broken-toml",),
    )
    (root / ".git").mkdir()
    (root / "notes.md").write_text("not a task")
    spec = root / "from-spec"
    spec.mkdir()
    (spec / "spec.md").write_text("# a spec\n")
    tasks = discover([root])
    assert [t.name for t in tasks] == ["always-pass", "broken-toml", "clean-wordfreq", "from-spec", "tb1-clean"]
    errors = {t.name: t.error for t in tasks}
    assert "task.toml" in errors["broken-toml"] and "timeout_sec" in errors["broken-toml"]
    assert [n for n, e in errors.items() if e] == ["broken-toml"]  # a spec-only folder is checked by its run

    assert [t.name for t in discover([root], include=["clean-*", "tb1-*"])] == ["clean-wordfreq", "tb1-clean"]
    assert [t.name for t in discover([root], exclude=["*-clean", "broken-*"])] == [
        "always-pass",
        "clean-wordfreq",
        "from-spec",
    ]
    assert [t.name for t in discover([root], max_tasks=2)] == ["always-pass", "broken-toml"]
    # a task named twice (the dataset and the task itself) is one task; a missing path is a row of its own
    both = discover([root / "clean-wordfreq", root, tmp_path / "nope"], include=["clean-*", "nope"])
    assert [(t.name, bool(t.error)) for t in both] == [("clean-wordfreq", False), ("nope", True)]

    assert is_dataset_run([root]) and is_dataset_run([root / "always-pass", root / "tb1-clean"])
    assert not is_dataset_run([root / "always-pass"]) and not is_dataset_run([tmp_path / "nope"])
    assert not is_dataset_run([spec])
    lost = shutil.copytree(EXAMPLES / "clean-wordfreq", tmp_path / "lost-toml")  # a task without its task.toml:
    (lost / "task.toml").unlink()  # its subfolders are no tasks, so it stays today's "not an environment" error
    assert not is_dataset_run([lost])


def test_a_dataset_runs_every_task_and_a_malformed_one_is_a_row(dataset_dir, qa_toml, keep_logging):
    out = run_json(["run", str(dataset_dir), "-c", str(qa_toml), "--jobs", "2"], code=1)
    rows = {r["name"]: r for r in out["tasks"]}
    assert {n: (r["verdict"], r["exit_code"]) for n, r in rows.items()} == {
        "always-pass": ("awaiting_approval", 4),
        "broken-toml": ("invalid", 2),
        "clean-wordfreq": ("clean", 0),
    }
    assert "task.toml" in rows["broken-toml"]["error"] and rows["broken-toml"]["run_id"] is None
    assert {f["rule"] for f in rows["always-pass"]["findings"]} >= {"nop-passes"}
    assert rows["always-pass"]["proposals"][0]["state"] == "awaiting_approval"
    assert out["exit_code"] == 1 and out["schema_version"] == 1 and out["dataset_run_id"].startswith("ds-")
    assert out["summary"]["tasks"] == 3 and out["summary"]["by_verdict"] == {
        "awaiting_approval": 1,
        "invalid": 1,
        "clean": 1,
    }
    assert out["summary"]["by_rule"]["nop-passes"] == 1

    store = Store(Path(load_config(qa_toml, {}).db_path))
    ds = store.get_dataset(out["dataset_run_id"])
    assert ds["status"] == "finished" and ds["exit_code"] == 1 and ds["report"]["tasks"] == out["tasks"]
    linked = {t["name"]: (t["status"], t["run_id"]) for t in store.dataset_tasks(out["dataset_run_id"])}
    assert linked["broken-toml"] == ("invalid", None)
    for name in ("always-pass", "clean-wordfreq"):  # each task is a run of its own, linked to the dataset
        assert linked[name] == ("done", rows[name]["run_id"])
        assert store.get_run(rows[name]["run_id"])["verdict"] == rows[name]["verdict"]
    assert [d["dataset_id"] for d in store.list_datasets()] == [out["dataset_run_id"]]

    only = run_json(["run", str(dataset_dir), "-c", str(qa_toml), "--task", "clean-*"], code=0)
    assert [(r["name"], r["verdict"]) for r in only["tasks"]] == [("clean-wordfreq", "clean")]


def test_one_task_alone_is_todays_qa_run(qa_toml, tmp_path, keep_logging):
    env = shutil.copytree(EXAMPLES / "clean-wordfreq", tmp_path / "clean-wordfreq")
    out = run_json(["run", str(env), "-c", str(qa_toml)], code=0)
    assert out["verdict"] == "clean" and "dataset_run_id" not in out  # the run's own report, as before
    bad = run_json(["run", str(tmp_path / "nope"), "-c", str(qa_toml)], code=2)
    assert "no such directory" in bad["error"]


def test_text_and_markdown_outputs(dataset_dir, qa_toml, keep_logging):
    res = CliRunner().invoke(app, ["run", str(dataset_dir), "-c", str(qa_toml), "-x", "always-*"])
    assert res.exit_code == 1, res.output[-3000:]
    assert "clean-wordfreq" in res.stdout and "broken-toml" in res.stdout and "invalid" in res.stdout
    assert "2 tasks" in res.stdout and "qa run --resume ds-" in res.stdout
    md = CliRunner().invoke(app, ["run", str(dataset_dir), "-c", str(qa_toml), "--format", "markdown"])
    assert md.exit_code == 1, md.output[-3000:]
    assert "clean-wordfreq" in md.stdout and "always-pass" in md.stdout and "|" in md.stdout
    bad = CliRunner().invoke(app, ["run", str(dataset_dir), "-c", str(qa_toml), "--format", "yaml"])
    assert bad.exit_code == 2 and "--format" in bad.output


def test_resume_after_an_interrupt_runs_only_what_is_not_recorded(dataset_dir, qa_toml, backend, keep_logging):
    config = load_config(qa_toml, {})
    plan = DatasetPlan(new_dataset_id(), discover([dataset_dir]), [str(dataset_dir)], 1, "wait")
    store = create_dataset(config, plan)
    finished: list[str] = []

    def stop_after_first(row) -> None:  # Ctrl-C right after the first task with a run finished
        finished.append(row.name)
        if row.run_id:
            raise KeyboardInterrupt

    with pytest.raises(DatasetInterrupted):
        DatasetRunner(config, store, plan, stop_after_first).run()
    assert store.get_dataset(plan.dataset_id)["status"] == "interrupted"
    first = finished[-1]
    runs_before = Counter(sb.spec.labels.get("envqa.run") for sb in backend.started)

    out = run_json(["run", "--resume", plan.dataset_id, "-c", str(qa_toml)], code=1)
    assert out["dataset_run_id"] == plan.dataset_id and len(out["tasks"]) == 3
    rows = {r["name"]: r for r in out["tasks"]}
    runs_after = Counter(sb.spec.labels.get("envqa.run") for sb in backend.started)
    first_run = rows[first]["run_id"]
    assert runs_after[first_run] == runs_before[first_run] > 0  # the finished task ran no sandbox again
    others = [r["run_id"] for n, r in rows.items() if n != first and r["run_id"]]
    assert others and all(runs_after[rid] > 0 for rid in others), (first, rows, runs_before, runs_after)
    assert store.get_dataset(plan.dataset_id)["status"] == "finished"


def test_resume_of_a_task_killed_before_its_first_checkpoint_starts_it_afresh(dataset_dir, qa_toml, keep_logging):
    """kill -9 right after the task's run row was written: no checkpoint to continue, the same run id starts over."""
    config = load_config(qa_toml, {})
    plan = DatasetPlan(new_dataset_id(), discover([dataset_dir], include=["clean-*"]), [str(dataset_dir)], 1, "wait")
    store = create_dataset(config, plan)
    path = str(plan.tasks[0].path)
    store.link_dataset_run(plan.dataset_id, path, "run-killed-early")  # what run_task writes first ...
    store.create_run("run-killed-early", path)  # ... and execute_run next, then the kill
    out = run_json(["run", "--resume", plan.dataset_id, "-c", str(qa_toml)], code=0)
    assert [(r["name"], r["run_id"], r["verdict"]) for r in out["tasks"]] == [
        ("clean-wordfreq", "run-killed-early", "clean")
    ]
    assert store.get_run("run-killed-early")["status"] == "finished"
