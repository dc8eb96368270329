"""Stock rq runs our jobs (issue 22): `rq worker` from the venv, started by hand on the queue a detached run's
trials go to, completes them; only the run's graph (the `control` queue) is on a `qa worker`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from redis import Redis
from rq import Queue
from rq.job import Job

from envqa.scheduler.embedded import RedisServer, WorkerPool
from envqa.store.db import Store

from .conftest import copy_example, run_qa


def test_a_stock_rq_worker_completes_the_trials_of_a_detached_run(tmp_path, qa_env, base_image):
    env_dir = copy_example("clean-wordfreq", tmp_path)
    (tmp_path / "qa.toml").write_text("[probes]\nenabled = []\n")
    server = RedisServer(tmp_path / "redis").start()
    graph = WorkerPool(server.url, 1, "control", env={"QA_HOME": qa_env["QA_HOME"]},
                       log_dir=tmp_path / "workers").start()
    rq_cli = Path(sys.executable).with_name("rq")
    log = open(tmp_path / "rq-worker.log", "wb")
    stock = subprocess.Popen([str(rq_cli), "worker", "--with-scheduler", "--url", server.url, "--name", "stock-rq",
                              "sandbox"], env={**qa_env, "QA_HOME": qa_env["QA_HOME"]}, cwd=tmp_path,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        qa_env["REDIS_URL"] = server.url
        queued = run_qa(["run", str(env_dir), "--detach", "--run-id", "by-rq", "--oracle-runs", "1", "--json"],
                        qa_env, timeout=120, cwd=tmp_path)
        assert queued.returncode == 0, queued.stderr[-3000:]
        done = run_qa(["status", "by-rq", "--follow", "--timeout", "400", "--json"], qa_env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:] + (tmp_path / "rq-worker.log").read_text()[-3000:]
        assert json.loads(done.stdout)["status"] == "finished"
        conn = Redis.from_url(server.url)
        sandbox = Queue("sandbox", connection=conn)
        trial_jobs = [Job.fetch(j, connection=conn) for j in sandbox.finished_job_registry.get_job_ids()]
        assert trial_jobs, "the run put no trial on the sandbox queue"
        assert sandbox.failed_job_registry.count == 0 and sandbox.count == 0
        # every trial ran on the stock `rq worker`, and finished there; the store has each one's result
        assert {(j.worker_name, j.get_status()) for j in trial_jobs} == {("stock-rq", "finished")}
        assert all(Store(Path(qa_env["QA_HOME"]) / "envqa.db").get_trial(j.id) is not None for j in trial_jobs)
    finally:
        if stock.poll() is None:
            os.killpg(stock.pid, signal.SIGTERM)
            stock.wait(timeout=30)
        graph.stop()
        server.cleanup()
