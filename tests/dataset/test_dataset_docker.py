"""`qa run PATH...` on Docker, as a user runs it: the `qa` entry point as a subprocess, real images and containers.

- three small examples (Harbor and TB1) plus a second copy of one, as one dataset with `--json`: one row per task,
  the dataset's exit code, and the copies' identical image built once although both tasks ran at the same time;
- a kill -9 of the dataset process halfway, then `--resume`: the tasks finished before the kill are not run again
  (no new trial of theirs), the interrupted one continues its own run, nothing is left running;
- REDIS_URL with two outside `qa worker` processes, one killed mid-dataset: every task still ends with its row.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import uuid
from pathlib import Path

import pytest

from envqa.scheduler.embedded import WorkerPool
from qa_testkit import EXAMPLES, QA, containers, interruptible, sigkill_when, store_rows, wait_for

FAST = "[probes]\noracle_runs = 1\n[reviser]\ngate_oracle_runs = 1\n"


def _dataset(root: Path, names: list[str]) -> Path:
    root.mkdir(parents=True)
    for name in names:
        shutil.copytree(EXAMPLES / name, root / name, ignore=shutil.ignore_patterns("qa-expected.json"))
    return root


def _qa(args: list[str], env: dict, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([QA, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _json(proc: subprocess.CompletedProcess, code: int) -> dict:
    assert proc.returncode == code, f"exit {proc.returncode}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def cwd(tmp_path):
    d = tmp_path / "cwd"
    d.mkdir()
    (d / "qa.toml").write_text(FAST)
    return d


def _remove_images(docker_client, version: str) -> None:
    for image in docker_client.images.list(filters={"label": f"envqa.env_version={version}"}):
        docker_client.images.remove(image.id, force=True)


def test_three_examples_as_one_dataset_with_json(tmp_path, cwd, qa_env, base_image, docker_client):
    ds = _dataset(tmp_path / "ds", ["clean-wordfreq", "tb1-clean", "always-pass"])
    marker = uuid.uuid4().hex  # new content: an image nobody built yet, so "built once" is measured, not cached
    for copy in ("twin-a", "twin-b"):
        shutil.copytree(EXAMPLES / "clean-wordfreq", ds / copy, ignore=shutil.ignore_patterns("qa-expected.json"))
        (ds / copy / "environment" / "marker.txt").write_text(marker)
    out = _json(_qa(["run", str(ds), "--jobs", "5", "--approval", "wait", "--json"], qa_env, cwd), code=4)
    rows = {r["name"]: r for r in out["tasks"]}
    assert {n: (r["verdict"], r["exit_code"]) for n, r in rows.items()} == {
        "always-pass": ("awaiting_approval", 4),
        "clean-wordfreq": ("clean", 0),
        "tb1-clean": ("clean", 0),
        "twin-a": ("clean", 0),
        "twin-b": ("clean", 0),
    }
    assert out["exit_code"] == 4 and out["summary"]["by_verdict"] == {"awaiting_approval": 1, "clean": 4}
    assert all(r["run_id"] and r["seconds"] > 0 and Path(r["report_html"]).is_file() for r in rows.values())
    home = qa_env["QA_HOME"]
    versions = {
        r["env_version"]
        for r in store_rows(
            home,
            "SELECT env_version FROM runs WHERE run_id IN (?,?)",
            (rows["twin-a"]["run_id"], rows["twin-b"]["run_id"]),
        )
    }
    try:
        assert len(versions) == 1  # the same content is the same version, whatever the folder's name
        builds = store_rows(home, "SELECT COUNT(*) AS n FROM image_builds WHERE env_version=?", (versions.pop(),))
        assert builds[0]["n"] == 1  # two tasks, one build: the second waited for the first (or found its image)
    finally:
        for v in {r["env_version"] for r in store_rows(home, "SELECT env_version FROM runs")}:
            if v and store_rows(home, "SELECT 1 AS x FROM image_builds WHERE env_version=?", (v,)):
                _remove_images(docker_client, v)
    linked = store_rows(
        home, "SELECT path, run_id, status FROM dataset_tasks WHERE dataset_id=?", (out["dataset_run_id"],)
    )
    assert sorted((Path(r["path"]).name, r["status"]) for r in linked) == sorted((n, "done") for n in rows)


@pytest.mark.slow  # a kill test (45 s of one CI worker): `make test-all`
def test_kill_9_halfway_then_resume_repeats_no_finished_task(tmp_path, cwd, qa_env, base_image, docker_client):
    ds = _dataset(tmp_path / "ds", ["clean-wordfreq", "tb1-clean", "clean-pip-or-true"])
    home = qa_env["QA_HOME"]
    proc = subprocess.Popen(
        [QA, "run", str(ds), "--jobs", "1", "--json"],
        env=qa_env,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def halfway():  # one task done, the next one's run has recorded a trial
        done = store_rows(home, "SELECT run_id FROM dataset_tasks WHERE status='done'")
        running = store_rows(
            home,
            "SELECT t.run_id FROM dataset_tasks t JOIN trials r ON r.run_id = t.run_id "
            "WHERE t.status='running' AND r.status='done'",
        )
        return done and running

    sigkill_when(proc, halfway, 600, "one task done and another one's first trial")
    before = {
        r["run_id"]: r["n"]
        for r in store_rows(home, "SELECT run_id, COUNT(*) AS n FROM trials WHERE status='done' GROUP BY run_id")
    }
    finished = [r["run_id"] for r in store_rows(home, "SELECT run_id FROM dataset_tasks WHERE status='done'")]
    interrupted = [r["run_id"] for r in store_rows(home, "SELECT run_id FROM dataset_tasks WHERE status='running'")]
    dataset_id = store_rows(home, "SELECT dataset_id FROM datasets")[0]["dataset_id"]

    out = _json(_qa(["run", "--resume", dataset_id, "--json"], qa_env, cwd), code=0)
    assert out["dataset_run_id"] == dataset_id and [r["verdict"] for r in out["tasks"]] == ["clean"] * 3
    after = {
        r["run_id"]: r["n"]
        for r in store_rows(home, "SELECT run_id, COUNT(*) AS n FROM trials WHERE status='done' GROUP BY run_id")
    }
    for run_id in finished:  # finished before the kill: not one trial more
        assert after[run_id] == before[run_id]
    rows = {r["run_id"] for r in out["tasks"]}
    assert set(finished) | set(interrupted) <= rows  # the interrupted task continued its own run, no new one
    assert len(store_rows(home, "SELECT run_id FROM runs")) == 3
    for run_id in interrupted:
        assert after[run_id] >= before[run_id]
    for run_id in rows:  # what the killed process left running went with the resumed run's cleanup
        assert not containers(docker_client, f"envqa.run={run_id}")


@pytest.mark.slow  # a kill test (86 s of one CI worker): `make test-all`
def test_redis_mode_two_workers_one_killed_loses_nothing(tmp_path, cwd, qa_env, base_image, redis_server):
    ds = _dataset(tmp_path / "ds", ["clean-wordfreq", "tb1-clean", "clean-pip-or-true"])
    server = redis_server(tmp_path / "redis")
    home = qa_env["QA_HOME"]
    pool = WorkerPool(server.url, 2, "*", env={"QA_HOME": home}, log_dir=tmp_path / "workers").start()
    try:
        qa_env["REDIS_URL"] = server.url
        proc = subprocess.Popen(
            [QA, "run", str(ds), "--json", "--stall-timeout", "300"],
            env=qa_env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # the dataset's trials are on the workers (one recorded already): kill -9 one of the two workers
        wait_for(
            lambda: store_rows(
                home, "SELECT 1 AS x FROM trials t JOIN dataset_tasks d ON d.run_id = t.run_id WHERE t.status='done'"
            ),
            600,
            "a first trial of the dataset",
        )
        victim = pool.procs[0]
        os.killpg(victim.pid, signal.SIGKILL)  # the worker and the job process it forked
        victim.wait(timeout=30)
        stdout, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, stderr[-4000:]
        out = json.loads(stdout.strip().splitlines()[-1])
        assert sorted((r["name"], r["verdict"]) for r in out["tasks"]) == [
            ("clean-pip-or-true", "clean"),
            ("clean-wordfreq", "clean"),
            ("tb1-clean", "clean"),
        ]
        assert len(store_rows(home, "SELECT run_id FROM runs")) == 3  # no task ran as a second run
    finally:
        pool.stop()
        server.cleanup()


def test_ctrl_c_stops_cleanly_and_prints_the_resume_command(tmp_path, cwd, qa_env, base_image, docker_client):
    ds = _dataset(tmp_path / "ds", ["clean-wordfreq", "tb1-clean"])
    home = qa_env["QA_HOME"]
    proc = subprocess.Popen(
        [QA, "run", str(ds), "--jobs", "2"],
        env=qa_env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    try:

        def a_trial_container():
            runs = [r["run_id"] for r in store_rows(home, "SELECT run_id FROM dataset_tasks WHERE run_id IS NOT NULL")]
            return any(containers(docker_client, f"envqa.run={rid}", stopped=False) for rid in runs) and runs

        runs = wait_for(a_trial_container, 600, "a trial container of the dataset", every=0.2)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr[-3000:]
    dataset_id = store_rows(home, "SELECT dataset_id, status FROM datasets")[0]
    assert dataset_id["status"] == "interrupted"
    assert f"qa run --resume {dataset_id['dataset_id']}" in stderr
    for run_id in runs:
        assert not containers(docker_client, f"envqa.run={run_id}")
