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

from envqa.core.verdicts import exit_code
from envqa.demo.provider_server import FakeProviderServer
from envqa.demo.script import Script
from envqa.scheduler.embedded import WorkerPool
from envqa.store.db import Store
from providers import scripts
from providers.conftest import GOOD_KEY

from .conftest import copy_example, run_qa


def test_a_stock_rq_worker_completes_the_trials_of_a_detached_run(tmp_path, qa_env, base_image, redis_server):
    finished = _detached_run_on_stock_rq(tmp_path, qa_env, redis_server, ["sandbox"], [])
    assert finished["sandbox"], "the run put no trial on the sandbox queue"


def test_a_stock_rq_worker_on_a_model_queue_completes_a_solver_trial(tmp_path, qa_env, base_image, redis_server):
    """The model's queue too: the solver trial (real SDK, fake provider over HTTP) runs on the stock worker.
    One trial that passes is pass@1 = 1: out of band (too easy), which is the run's right verdict."""
    srv = FakeProviderServer(Script.model_validate({"keys": [GOOD_KEY], "models": {"good": scripts.solving()}}))
    srv.start()
    try:
        qa_env = {**qa_env, "ANTHROPIC_API_KEY": GOOD_KEY, "ANTHROPIC_BASE_URL": srv.url}
        finished = _detached_run_on_stock_rq(
            tmp_path,
            qa_env,
            redis_server,
            ["sandbox", "anthropic/good"],
            ["-m", "anthropic/good", "-n", "1"],
            verdict="out_of_band",
        )
    finally:
        srv.stop()
    [solver] = finished["anthropic/good"]
    result = Store(Path(qa_env["QA_HOME"]) / "envqa.db").get_trial(solver.id)
    assert result is not None and result.agent == "solver" and result.reward == 1.0, result


def _detached_run_on_stock_rq(
    tmp_path, qa_env, redis_server, queues: list[str], run_args: list[str], verdict: str = "clean"
) -> dict[str, list[Job]]:
    """`qa run --detach` with only the graph on a `qa worker`; a stock `rq worker` on `queues` runs every trial.
    Returns each queue's finished jobs, after checking they all ran on the stock worker and are in the store."""
    env_dir = copy_example("clean-wordfreq", tmp_path)
    (tmp_path / "qa.toml").write_text("[probes]\nenabled = []\n")
    server = redis_server(tmp_path / "redis")
    graph = WorkerPool(
        server.url,
        1,
        "control",
        env=qa_env,  # the graph checks the model's key too
        log_dir=tmp_path / "workers",
    ).start()
    rq_cli = Path(sys.executable).with_name("rq")
    log = open(tmp_path / "rq-worker.log", "wb")
    stock = subprocess.Popen(
        [str(rq_cli), "worker", "--with-scheduler", "--url", server.url, "--name", "stock-rq", *queues],
        env={**qa_env, "QA_HOME": qa_env["QA_HOME"]},
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        qa_env = {**qa_env, "REDIS_URL": server.url}
        queued = run_qa(
            ["run", str(env_dir), "--detach", "--run-id", "by-rq", "--oracle-runs", "1", "--json", *run_args],
            qa_env,
            timeout=120,
            cwd=tmp_path,
        )
        assert queued.returncode == 0, queued.stderr[-3000:]
        done = run_qa(["status", "by-rq", "--follow", "--timeout", "400", "--json"], qa_env, cwd=tmp_path)
        worker_log = (tmp_path / "rq-worker.log").read_text()[-3000:]
        assert done.returncode == exit_code(verdict), done.stdout[-3000:] + worker_log
        assert (json.loads(done.stdout)["status"], json.loads(done.stdout)["verdict"]) == ("finished", verdict)
        conn = Redis.from_url(server.url)
        finished: dict[str, list[Job]] = {}
        for name in queues:
            queue = Queue(name, connection=conn)
            finished[name] = [Job.fetch(j, connection=conn) for j in queue.finished_job_registry.get_job_ids()]
            assert queue.failed_job_registry.count == 0 and queue.count == 0, name
        jobs = [j for js in finished.values() for j in js]
        # every trial ran on the stock `rq worker`, and finished there; the store has each one's result
        assert {(j.worker_name, j.get_status()) for j in jobs} == {("stock-rq", "finished")}
        assert all(Store(Path(qa_env["QA_HOME"]) / "envqa.db").get_trial(j.id) is not None for j in jobs)
        return finished
    finally:
        if stock.poll() is None:
            os.killpg(stock.pid, signal.SIGTERM)
            stock.wait(timeout=30)
        graph.stop()
        server.cleanup()
