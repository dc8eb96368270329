"""`qa run` end to end as a subprocess: exit codes, Ctrl-C, kill + resume, verifier errors, Docker down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from qa_testkit import QA, interruptible, run_qa, sigkill_when, wait_for
from tests.foundation.conftest import containers_with, done_trials, write_env


def _no_probes(tmp_path: Path) -> list[str]:
    """`--config` for runs that test the run machinery, not the shortcut hunter (which is slow)."""
    path = tmp_path / "qa.toml"
    path.write_text("[probes]\nenabled = []\n[loop]\nmax_iterations = 0\n")  # one version, as loaded: no revise loop
    return ["--config", str(path)]


def _popen(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [QA, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=interruptible
    )


@pytest.mark.fast
def test_docker_unreachable_exits_3_with_a_clear_message(tmp_path, qa_env):
    root = write_env(tmp_path / "env")
    env = dict(qa_env, DOCKER_HOST="unix:///nonexistent.sock")
    res = run_qa(["run", str(root), "--json"], env, timeout=120)
    assert res.returncode == 3, res.stderr
    assert "cannot reach the Docker engine" in res.stderr and "make setup" in res.stderr
    assert "Traceback" not in res.stderr
    doc = json.loads(res.stdout)  # --json: one object with the error on stdout, nothing else
    assert doc["exit_code"] == 3 and "cannot reach the Docker engine" in doc["error"]
    assert not Path(qa_env["QA_HOME"]).exists()  # nothing started, nothing recorded


def test_verifier_writing_nothing_is_a_finding_not_a_fail(tmp_path, qa_env):
    root = write_env(tmp_path / "env", test_sh="#!/bin/bash\necho 'looked at it, wrote no reward'\n")
    res = run_qa(["run", str(root), "--json", "--oracle-runs", "1", *_no_probes(tmp_path)], qa_env, timeout=180)
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    assert report["verdict"] == "findings"
    assert {t["outcome"] for t in report["trials"]} == {"infra"}
    assert {t["error_class"] for t in report["trials"]} == {"verifier_error"}
    assert all(t["reward"] is None for t in report["trials"])
    rules = {f["rule"] for f in report["findings"]}
    assert "verifier-error" in rules and "oracle-fails" not in rules


def test_ctrl_c_mid_trial_removes_containers_and_exits_130(tmp_path, qa_env, docker_client):
    root = write_env(tmp_path / "env", solve="sleep 300\n", agent_timeout=600)
    run_id = "run-sigint-" + os.urandom(4).hex()
    proc = _popen(["run", str(root), "--run-id", run_id, "--json", *_no_probes(tmp_path)], qa_env)
    try:

        def solve_running():
            for c in containers_with(docker_client, **{"envqa.run": run_id}):
                try:
                    if any("sleep 300" in " ".join(p) for p in c.top().get("Processes", [])):
                        return True
                except Exception:  # noqa: BLE001 - a container that went away while polled
                    pass
            return False

        wait_for(solve_running, 120, "the oracle's solve.sh to be running in a container", every=0.2)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "resume" in stderr
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_sigkill_then_resume_runs_only_the_missing_trials(tmp_path, qa_env, docker_client):
    root = write_env(tmp_path / "env", solve="sleep 1\necho ok > /app/out.txt\n")
    run_id = "run-resume-" + os.urandom(4).hex()
    db = Path(qa_env["QA_HOME"]) / "envqa.db"
    proc = _popen(["run", str(root), "--run-id", run_id, "--json", *_no_probes(tmp_path)], qa_env)
    sigkill_when(proc, lambda: done_trials(db), 180, "the first trial to be recorded")
    before = {t["trial_id"]: t for t in done_trials(db) if t["purpose"] == "validate"}
    assert 1 <= len(before) < 4, f"kill landed too late to test resume: {len(before)} trials already recorded"

    res = run_qa(["run", "--resume", run_id, "--json", *_no_probes(tmp_path)], qa_env, timeout=300)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["run_id"] == run_id and report["verdict"] == "clean"
    after = {t["trial_id"]: t for t in done_trials(db) if t["purpose"] == "validate"}
    assert len(after) == 4  # oracle x3 + nop x1, each exactly once
    assert set(after) <= {t["trial_id"] for t in report["trials"]}
    for trial_id, row in before.items():  # recorded trials were not run again
        assert after[trial_id]["result_json"] == row["result_json"]
        assert after[trial_id]["created_at"] == row["created_at"]
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_image_that_does_not_build_is_a_finding(tmp_path, qa_env):
    # The local base itself, so that no image-map substitution is involved: a build that fails after one is
    # inconclusive (image-map-build-failed, tests/probes/test_inconclusive.py), not a finding.
    root = write_env(tmp_path / "env", dockerfile="FROM envqa-base:bookworm\nRUN exit 9\n")
    res = run_qa(["run", str(root), "--json", *_no_probes(tmp_path)], qa_env, timeout=300)
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    assert [f["rule"] for f in report["findings"]] == ["image-build-failed"]


def test_run_id_reuse_is_an_input_error(tmp_path, qa_env):
    root = write_env(tmp_path / "env")
    first = run_qa(
        ["run", str(root), "--run-id", "run-twice", "--json", "--oracle-runs", "1", *_no_probes(tmp_path)],
        qa_env,
        timeout=300,
    )
    assert first.returncode == 0, first.stderr
    again = run_qa(["run", str(root), "--run-id", "run-twice"], qa_env, timeout=120)
    assert again.returncode == 2 and "already exists" in again.stderr
