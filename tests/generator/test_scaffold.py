"""`qa new`: a blank Harbor task that lints clean, whose oracle passes and whose nop fails (real CLI, Docker)."""

from __future__ import annotations

import json

from qa_testkit import run_qa


def test_qa_new_lints_clean_and_runs_oracle_pass_nop_fail(qa_env, tmp_path, docker_backend):
    made = run_qa(["new", "demo-task", "--json"], qa_env, cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
    assert sorted(json.loads(made.stdout)["files"]) == [
        "environment/Dockerfile",
        "instruction.md",
        "solution/solve.sh",
        "task.toml",
        "tests/test.sh",
    ]
    assert "demo-task" in (tmp_path / "demo-task" / "instruction.md").read_text()
    lint = run_qa(["lint", "demo-task", "--json"], qa_env, cwd=tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr[-2000:]
    report = json.loads(lint.stdout)
    assert report.pop("coverage")["summary"].startswith("nothing found by ")  # what "nothing found" covers
    assert report == {"ok": True, "findings": []}  # not even an info finding
    again = run_qa(["new", "demo-task"], qa_env, cwd=tmp_path)
    assert again.returncode == 2 and "not empty" in again.stderr  # never writes over an existing task
    run = run_qa(["run", "demo-task", "--oracle-runs", "1", "--approval", "wait", "--json"], qa_env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout)
    outcomes = {t["agent"]: t["outcome"] for t in report["trials"] if t["agent"] in ("oracle", "nop")}
    assert outcomes == {"oracle": "pass", "nop": "fail"} and report["verdict"] == "clean", report["findings"]
