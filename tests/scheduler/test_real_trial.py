"""A real oracle trial (Docker) through a real RQ worker process, and `qa run` in embedded mode."""

from __future__ import annotations

import json

from redis import Redis
from rq.job import Job

from envqa.core.environment import load_environment
from envqa.core.models import TrialSpec
from envqa.scheduler.embedded import WorkerPool
from envqa.scheduler.rq_executor import RQExecutor
from envqa.store.db import Store
from qa_testkit import store_rows

from .conftest import copy_example, run_qa, wait_for, workers_with_home


def test_oracle_trial_runs_on_an_rq_worker_end_to_end(tmp_path, qa_config, base_image, redis_server):
    env = load_environment(copy_example("clean-wordfreq", tmp_path))
    server = redis_server(tmp_path / "redis")
    pool = WorkerPool(
        server.url, 1, "sandbox", settings_json=qa_config.scheduler.model_dump_json(), log_dir=tmp_path / "worker-logs"
    ).start()
    try:
        store = Store(qa_config.db_path)
        events = []
        executor = RQExecutor(qa_config, store, server.url, on_event=lambda kind, **d: events.append(kind))
        spec = TrialSpec(run_id="r-rq", env_version=env.version, agent="oracle", index=0)
        [result] = executor.run(env, [spec])
        assert (result.outcome, result.reward) == ("pass", 1.0)
        job = Job.fetch(spec.trial_id, connection=Redis.from_url(server.url))
        # the store records first, rq's bookkeeping ends a moment later: await it, with a deadline
        wait_for(lambda: job.get_status() == "finished", 15, "rq's finished status")
        assert job.origin == "sandbox" and job.worker_name
        assert store.trial_states([spec.trial_id])[spec.trial_id] == ("done", 1)
        # the progress bar learns its total first ("stalled" only shows while the worker is still starting)
        assert [e for e in events if e != "stalled"] == ["trials_queued", "trial_start", "trial_done"]
        # idempotent: running the same spec again returns the stored result without a new job run
        [again] = executor.run(env, [spec])
        assert again == result and store.trial_states([spec.trial_id])[spec.trial_id] == ("done", 1)
    finally:
        pool.stop()
        server.cleanup()


def test_qa_run_in_embedded_mode_uses_workers_and_leaves_nothing_running(tmp_path, qa_env, base_image):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    qa_env["QA_SCHEDULER_MODE"] = "embedded"
    (tmp_path / "qa.toml").write_text("[probes]\nenabled = []\n")  # this test is about scheduling only
    out = run_qa(["run", str(env_dir), "--json", "--oracle-runs", "1"], qa_env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.splitlines()[-1])
    assert report["verdict"] == "clean"
    validate = [t["agent"] for t in report["trials"] if t.get("purpose", "validate") == "validate"]
    assert sorted(validate) == ["nop", "oracle"]
    # attempts are counted by the worker's trial job; the in-process executor never touches them
    rows = store_rows(qa_env["QA_HOME"], "SELECT attempts FROM trials WHERE purpose='validate'")
    attempts = [r["attempts"] for r in rows]
    assert attempts == [1, 1]
    assert len(list((tmp_path / "qa-home" / "workers").glob("worker-*.log"))) == 2
    assert workers_with_home(qa_env["QA_HOME"]) == []


def test_qa_run_with_redis_url_only_enqueues_and_an_outside_worker_does_the_work(
    tmp_path, qa_env, base_image, redis_server
):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    (tmp_path / "qa.toml").write_text("[probes]\nenabled = []\n[scheduler.sandbox]\nconcurrency = 3\n")
    server = redis_server(tmp_path / "redis")
    pool = WorkerPool(server.url, 1, "sandbox", log_dir=tmp_path / "worker-logs").start()  # as the Procfile runs it
    try:
        qa_env["REDIS_URL"] = server.url
        out = run_qa(["run", str(env_dir), "--json", "--oracle-runs", "1"], qa_env, timeout=300, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.splitlines()[-1])["verdict"] == "clean"
        status = run_qa(["queues", "--json"], qa_env, timeout=60, cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        [row] = json.loads(status.stdout)["queues"]
        assert (row["queue"], row["depth"], row["running"], row["limit"]) == ("sandbox", 0, 0, 3)
        conn = Redis.from_url(server.url)
        jobs = [Job.fetch(k.decode().split(":", 2)[2], connection=conn) for k in conn.keys("rq:job:*")]
        # oracle and nop went through this Redis (not a private one) and the outside worker ran both
        assert len(jobs) == 2 and {j.get_status() for j in jobs} == {"finished"}
        assert len({j.worker_name for j in jobs}) == 1
    finally:
        pool.stop()
        server.cleanup()
