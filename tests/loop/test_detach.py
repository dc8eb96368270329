"""Runs as jobs: with REDIS_URL, `qa run --detach` puts the graph on the `control` queue, outside `qa worker`
processes run it to the approval checkpoint, an approval from another process enqueues the continuation,
and the run finishes on the workers (`qa status --follow` tells)."""

from __future__ import annotations

import json
import shutil

from redis import Redis
from rq.job import Job

from envqa.scheduler.embedded import WorkerPool
from qa_testkit import EXAMPLES, run_qa

from .conftest import qa_json
from .test_approval_cli import _config_text


def test_detached_run_waits_for_approval_and_finishes_on_the_workers(tmp_path, qa_env, base_image, redis_server):
    env_dir = tmp_path / "reward-tamper"
    shutil.copytree(EXAMPLES / "reward-tamper", env_dir)
    (tmp_path / "qa.toml").write_text(_config_text())
    server = redis_server(tmp_path / "redis")
    # two outside workers on every queue ('*' includes control): one runs the graph, one its trials
    pool = WorkerPool(server.url, 2, "*", env={"QA_HOME": qa_env["QA_HOME"]}, log_dir=tmp_path / "workers").start()
    try:
        qa_env["REDIS_URL"] = server.url
        queued = qa_json(
            ["run", str(env_dir), "--detach", "--approval", "wait", "--run-id", "detached"], qa_env, tmp_path, code=0
        )
        assert (queued["run_id"], queued["status"]) == ("detached", "queued")
        waiting = run_qa(["status", "detached", "--follow", "--timeout", "400", "--json"], qa_env, cwd=tmp_path)
        assert waiting.returncode == 4, waiting.stderr[-3000:]
        st = json.loads(waiting.stdout)
        assert st["status"] == "awaiting_approval" and st["pending_proposal"]
        assert st["node"] == "approve"  # where the run is: the graph node it entered last

        approved = qa_json(["approve", "detached"], qa_env, tmp_path, code=0)
        assert approved["decision"]["action"] == "approve" and approved["enqueued"].startswith("control-detached-")
        done = run_qa(["status", "detached", "--follow", "--timeout", "400", "--json"], qa_env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        final = json.loads(done.stdout)
        assert (final["status"], final["verdict"], final["iteration"], final["node"]) == (
            "finished",
            "clean",
            1,
            "report",
        )
        show = qa_json(["show", "detached"], qa_env, tmp_path, code=0)
        assert len(show["versions"]) == 2 and show["versions"][1]["approval"].startswith("cli:")

        conn = Redis.from_url(server.url)
        jobs = [Job.fetch(j, connection=conn) for j in (queued["job_id"], approved["enqueued"])]
        assert [(j.origin, j.get_status()) for j in jobs] == [("control", "finished")] * 2
        assert all(j.worker_name for j in jobs)  # run by the outside workers, not by the qa processes
    finally:
        pool.stop()
        server.cleanup()
