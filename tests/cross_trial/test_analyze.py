"""`qa analyze` on the fixture generator's Harbor job and `tb run` folders (demo/imported_runs.py): the exact set of
findings per task and no others, the verdicts and exit code, the formats, matching to tasks on disk with stale
trials apart, and storing the trials once (re-importing adds nothing), on SQLite and on Postgres."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envqa.app.analyze import analyze
from envqa.core.config import load_config
from envqa.core.task_checksum import harbor_task_checksum
from envqa.demo.imported_runs import write_fixture_runs
from qa_testkit import run_qa

# What each fixture task must give, in both formats: {rule: (severity, number of trials cited)}, and the verdict.
EXPECTED = {
    "csv-report": ({"test-fails-alone": ("error", 6), "converging-wrong-answers": ("error", 6)}, "findings"),
    "port-config": ({"copied-verifier-values": ("critical", 1)}, "findings"),
    "log-rotate": ({"agent-never-ran": ("info", 3)}, "out_of_band"),
    "release-pipeline": ({}, "out_of_band"),
    "sat-hard": ({}, "clean"),  # hard, failures spread over its tests: a low pass rate and no finding
    "hello-world": ({}, "out_of_band"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return write_fixture_runs(tmp_path_factory.mktemp("fixture-runs"))


def _config(tmp_path: Path):
    return load_config(None, {"home": str(tmp_path / "qa-home")})


def _found(doc: dict) -> dict:
    return {
        t["task"]: ({f["rule"]: (f["severity"], len(f["trial_ids"])) for f in t["findings"]}, t["verdict"])
        for t in doc["tasks"]
    }


@pytest.mark.fast
@pytest.mark.parametrize("which", ["harbor_job", "tb_runs"])
def test_each_fixture_task_gets_exactly_its_findings(runs, tmp_path, which):
    doc = analyze([getattr(runs, which)], _config(tmp_path))
    assert _found(doc) == EXPECTED
    assert doc["trials"] == 54 and doc["problems"] == [] and doc["exit_code"] == 1
    tasks = {t["task"]: t for t in doc["tasks"]}
    never = tasks["log-rotate"]["agents"]["codex/openai/gpt-5-codex"]
    assert (never["n"], never["infra"], never["call"]) == (0, 3, "unmeasured")  # out of the pass rate
    assert tasks["log-rotate"]["harness_problems"]
    hard = tasks["sat-hard"]["pooled"]
    assert (hard["passes"], hard["n"], hard["call"]) == (2, 9, "inside")
    copied = tasks["port-config"]["findings"][0]
    assert "8471" in copied["message"] and "steps" in copied["location"]
    alone = {(r["test"].rsplit("::", 1)[-1], r["agent"]): r for r in tasks["csv-report"]["tests"]}
    row = alone[("test_total_two_decimals", "claude-code/anthropic/claude-opus-4-1")]
    assert (row["failures"], row["fails_alone"], row["trials"]) == (2, 2, 3)


@pytest.mark.fast
def test_matching_to_tasks_on_disk_keeps_other_versions_apart_and_stores_once(runs, tmp_path):
    """--tasks: trials of a task whose checksum differs are stale (kept, not counted); a matching checksum counts;
    storing twice adds nothing."""
    dataset = tmp_path / "dataset"
    for name in ("csv-report", "port-config"):
        shutil.copytree(Path(__file__).parents[2] / "examples" / "tb1-clean", dataset / name)
    job = tmp_path / "job"
    shutil.copytree(runs.harbor_job, job)
    current = harbor_task_checksum(dataset / "port-config")
    for result in job.glob("port-config__*/result.json"):  # port-config's trials ran the version on disk
        data = json.loads(result.read_text())
        result.write_text(json.dumps({**data, "task_checksum": current}))
    config = _config(tmp_path)
    doc = analyze([job], config, tasks=[dataset])
    tasks = {t["task"]: t for t in doc["tasks"]}
    assert set(tasks) == {"csv-report", "port-config"}
    assert (tasks["csv-report"]["trials"], tasks["csv-report"]["stale"]) == (0, 9)  # another version: not counted
    assert (tasks["port-config"]["trials"], tasks["port-config"]["stale"]) == (9, 0)
    assert doc["unmatched"] == {"hello-world": 9, "log-rotate": 9, "release-pipeline": 9, "sat-hard": 9}
    assert doc["stale_notes"] and "csv-report" in doc["stale_notes"][0]
    assert doc["stored"]["added"] == 18 and doc["stored"]["already_stored"] == 0  # stale ones are kept too
    again = analyze([job], config, tasks=[dataset])
    assert again["stored"] == {**doc["stored"], "added": 0, "already_stored": 18}
    counted = analyze([job], config, tasks=[dataset], count_stale=True, store=False)
    assert {t["task"]: t["trials"] for t in counted["tasks"]} == {"csv-report": 9, "port-config": 9}
    assert {f["rule"] for t in counted["tasks"] for f in t["findings"]} == {
        "test-fails-alone",
        "converging-wrong-answers",
        "copied-verifier-values",
    }


@pytest.mark.fast
def test_with_tasks_a_tasks_static_findings_join_its_triage(runs, tmp_path):
    """--tasks: what `qa lint` says of a task's files (warning and above) sits in the same triage as what its trials
    say, and ranks it; a clean look-alike task adds nothing from its files."""
    dataset = tmp_path / "dataset"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "leaky-solution", dataset / "port-config")
    shutil.copytree(Path(__file__).parents[2] / "examples" / "tb1-clean", dataset / "csv-report")
    doc = analyze([runs.harbor_job], _config(tmp_path), tasks=[dataset], count_stale=True, store=False)
    tasks = {t["task"]: t for t in doc["tasks"]}
    leaky = [f for f in tasks["port-config"]["findings"] if f["rule"] == "dockerfile-copies-solution"]
    assert (
        leaky
        and leaky[0]["severity"] == "critical"
        and leaky[0]["location"].endswith("Dockerfile:" + leaky[0]["location"].rsplit(":", 1)[-1])
    )
    assert not {f["rule"] for f in tasks["csv-report"]["findings"]} & {
        "dockerfile-copies-solution",
        "dockerfile-copies-tests",
    }
    assert doc["look_first"][0]["task"] == "port-config"  # critical from the files: looked at first


def test_storing_imported_trials_is_idempotent_on_postgres(runs, tmp_path, pg_url, monkeypatch):
    monkeypatch.setenv("QA_STORE_URL", pg_url)  # every Store opened from here on is this database
    dataset = tmp_path / "dataset"
    shutil.copytree(Path(__file__).parents[2] / "examples" / "tb1-clean", dataset / "hello-world")
    config = _config(tmp_path)
    first = analyze([runs.tb_runs], config, tasks=[dataset])
    second = analyze([runs.tb_runs], config, tasks=[dataset])
    assert (first["stored"]["added"], second["stored"]["added"], second["stored"]["already_stored"]) == (9, 0, 9)
    from envqa.store.db import Store

    rows = (
        Store(pg_url)
        ._conn()
        .execute("SELECT source, source_path FROM trials WHERE run_id=?", (first["stored"]["run_id"],))
        .fetchall()
    )
    assert len(rows) == 9 and {r["source"] for r in rows} == {"imported"} and all(r["source_path"] for r in rows)


@pytest.mark.fast
def test_the_cli_formats_and_bad_input(runs, tmp_path, qa_env):
    env = qa_env
    md = run_qa(["analyze", str(runs.harbor_job), "--format", "markdown"], env)
    assert md.returncode == 1, md.stderr
    assert "| csv-report |" in md.stdout and "`converging-wrong-answers` (error)" in md.stdout
    assert "| test | agent/model | failed | fails alone | trials |" in md.stdout
    gh = run_qa(["analyze", str(runs.tb_runs), "--format", "github"], env)
    assert gh.returncode == 1 and "::error " in gh.stdout and "::stop-commands::" in gh.stdout
    assert "::notice " in gh.stdout  # agent-never-ran is info
    broken = tmp_path / "broken-job"
    shutil.copytree(runs.harbor_job, broken)
    victim = sorted(broken.glob("hello-world__*"))[0]
    (victim / "result.json").write_text('{"task_name": "hello-world", "trial_na')  # truncated
    out = run_qa(["analyze", str(broken), "--json"], env)
    doc = json.loads(out.stdout)
    assert doc["trials"] == 53 and any(victim.name in p["path"] for p in doc["problems"])
    assert out.returncode == 1  # the rest imported and was analysed
    none = run_qa(["analyze", str(tmp_path / "missing"), "--json"], env)
    assert none.returncode == 2 and json.loads(none.stdout)["problems"][0]["message"] == "no such file or folder"
