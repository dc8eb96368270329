"""`qa worker` / `qa queues` input errors, and Ctrl-C of an embedded `qa run`."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from qa_testkit import containers, interruptible, store_rows

from .conftest import QA, copy_example, run_qa, wait_for, workers_with_home


@pytest.mark.fast
def test_queues_without_redis_url_says_what_to_set(qa_env, tmp_path):
    out = run_qa(["queues", "--json"], qa_env, timeout=60, cwd=tmp_path)
    assert out.returncode == 2 and "REDIS_URL" in out.stderr


@pytest.mark.fast
def test_worker_rejects_a_malformed_queue_name(qa_env, tmp_path):
    out = run_qa(["worker", "--queues", "gpt5", "--url", "redis://127.0.0.1:1/0"], qa_env, timeout=60, cwd=tmp_path)
    assert out.returncode == 2 and "--queues" in out.stderr and "provider/model" in out.stderr


@pytest.mark.fast
def test_worker_rejects_a_bad_limit_flag(qa_env, tmp_path):
    out = run_qa(
        ["worker", "--limit", "openai/gpt-5=zero", "--url", "redis://127.0.0.1:1/0"], qa_env, timeout=60, cwd=tmp_path
    )
    assert out.returncode == 2 and "--limit" in out.stderr


def test_ctrl_c_of_an_embedded_run_stops_workers_and_redis(tmp_path, qa_env, base_image, docker_client):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    qa_env["QA_SCHEDULER_MODE"] = "embedded"
    proc = subprocess.Popen(
        [QA, "run", str(env_dir), "--json", "--oracle-runs", "3", "--run-id", "ctrlc"],
        env=qa_env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    home = tmp_path / "qa-home"

    def running() -> bool:
        return bool(store_rows(home, "SELECT trial_id FROM trials WHERE status='running'"))

    try:
        wait_for(running, 120, "a trial to be running on a worker", every=0.1)
        workers = workers_with_home(qa_env["QA_HOME"])
        assert len(workers) == 2
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 30
    assert workers_with_home(qa_env["QA_HOME"]) == []
    assert containers(docker_client, "envqa.run=ctrlc") == []
    # resumable: nothing half-recorded; the interrupted trials are still queued/running in the store
    statuses = {r["status"] for r in store_rows(home, "SELECT status FROM trials WHERE purpose='validate'")}
    assert statuses <= {"queued", "running", "done"}


def test_a_killed_embedded_run_takes_its_workers_and_redis_with_it(tmp_path, qa_env, base_image, docker_client):
    """kill -9 of `qa run` runs no cleanup code; the kernel still ends its children (PR_SET_PDEATHSIG)."""
    env_dir = copy_example("clean-wordfreq", tmp_path)
    qa_env["QA_SCHEDULER_MODE"] = "embedded"
    proc = subprocess.Popen(
        [QA, "run", str(env_dir), "--json", "--run-id", "killed"],
        env=qa_env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: len(workers_with_home(qa_env["QA_HOME"])) == 2, 60, "embedded workers up", every=0.1)
        servers = [p for p in _redis_servers() if _parent(p) == proc.pid]
        assert len(servers) == 1
    finally:
        proc.kill()
        proc.wait(timeout=30)
    wait_for(lambda: workers_with_home(qa_env["QA_HOME"]) == [], 30, "workers to exit after their parent died")
    wait_for(lambda: servers[0] not in _redis_servers(), 30, "the private redis-server to exit")
    # each worker removed its trial's sandbox on the way out
    wait_for(
        lambda: containers(docker_client, "envqa.run=killed") == [],
        30,
        "the run's containers to be removed",
    )


def _redis_servers() -> list[int]:
    out = subprocess.run(["pgrep", "-x", "redis-server"], capture_output=True, text=True)
    return [int(x) for x in out.stdout.split()]


def _parent(pid: int) -> int:
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1
