"""`qa run` never waits without bound: crash-looping embedded workers and a Redis queue nobody serves
both end the run with exit 3 and a message that says what to look at."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import copy_example, run_qa, workers_with_home

FAULTS = Path(__file__).with_name("faults")


def test_an_embedded_run_whose_workers_crash_loop_exits_3_within_30s_with_the_log_tail(tmp_path, qa_env, base_image):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    (tmp_path / "qa.toml").write_text("[probes]\nenabled = []\n")
    qa_env.update(
        QA_SCHEDULER_MODE="embedded",
        QA_TEST_RQ_FAULT="register_birth",
        PYTHONPATH=f"{FAULTS}:{qa_env.get('PYTHONPATH', '')}".rstrip(":"),
    )
    started = time.monotonic()
    out = run_qa(["run", str(env_dir), "--json", "--oracle-runs", "1"], qa_env, timeout=120, cwd=tmp_path)
    seconds = time.monotonic() - started
    print(f"crash-looping embedded workers: exit {out.returncode} after {seconds:.1f}s")
    assert out.returncode == 3, out.stderr[-3000:]
    assert seconds < 30, f"took {seconds:.1f}s"
    logs = tmp_path / "qa-home" / "workers"
    assert f"{logs}/worker-" in out.stderr  # the path of the log to read
    assert "simulated rq incompatibility" in out.stderr  # and its last lines
    assert "worker_crash_loop" in out.stderr or "giving up" in out.stderr
    assert workers_with_home(qa_env["QA_HOME"]) == []


def test_qa_run_with_no_worker_on_redis_exits_3_after_the_stall_timeout_naming_the_queue(
    tmp_path, qa_env, base_image, redis_server
):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    (tmp_path / "qa.toml").write_text("[probes]\nenabled = []\n")
    server = redis_server(tmp_path / "redis")
    try:
        qa_env["REDIS_URL"] = server.url
        started = time.monotonic()
        out = run_qa(
            ["run", str(env_dir), "--json", "--oracle-runs", "1", "--stall-timeout", "20"],
            qa_env,
            timeout=120,
            cwd=tmp_path,
        )
        seconds = time.monotonic() - started
    finally:
        server.cleanup()
    print(f"no worker, --stall-timeout 20: exit {out.returncode} after {seconds:.1f}s")
    assert out.returncode == 3, out.stderr[-3000:]
    assert 20 <= seconds < 40, f"took {seconds:.1f}s"
    assert "queue 'sandbox'" in out.stderr and "no live worker" in out.stderr
    assert "qa worker --queues sandbox" in out.stderr


@pytest.mark.fast
def test_a_bad_stall_timeout_is_a_usage_error(tmp_path, qa_env):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    out = run_qa(["run", str(env_dir), "--stall-timeout", "-1"], qa_env, timeout=60, cwd=tmp_path)
    assert out.returncode == 2 and "--stall-timeout" in out.stderr
