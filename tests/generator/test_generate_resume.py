"""Issue 13: a spec directory as a detached run (generation, then the loop, on the workers) and a run
killed during generation that resumes without asking the generator model again (counted at the fake
provider, real Anthropic SDK over HTTP)."""

from __future__ import annotations

import json
import subprocess
import uuid

from redis import Redis
from rq.job import Job

from envqa.scheduler.embedded import WorkerPool
from qa_testkit import QA, run_qa, sigkill_when, store_rows
from tests.generator.conftest import GOOD, GOOD_KEY, MODEL, QA_TOML, answer, write_spec


def generator_asks(srv) -> int:
    return len([r for r in srv.requests if r["model"] == "claude-generator-test"])


def test_a_spec_dir_runs_detached_and_qa_status_follows_it(fake_provider, qa_env, tmp_path, base_image, redis_server):
    srv = fake_provider({"models": {"claude-generator-test": {"turns": [{**answer(GOOD), "delay": 2}]}}})
    keys = {"ANTHROPIC_API_KEY": GOOD_KEY, "ANTHROPIC_BASE_URL": srv.url}
    write_spec(tmp_path / "spec")
    server = redis_server(tmp_path / "redis")
    # two outside workers on every queue: one runs the graph, the other the generator's call and the trials
    pool = WorkerPool(
        server.url, 2, "*", env={"QA_HOME": qa_env["QA_HOME"], **keys}, log_dir=tmp_path / "workers"
    ).start()
    try:
        env = dict(qa_env, REDIS_URL=server.url)  # the enqueuing shell holds no API key: the workers do
        bare = run_qa(["run", "spec", "--detach", "--json"], env, cwd=tmp_path)  # no qa.toml: no generator model
        assert bare.returncode == 2 and "[generator] model" in bare.stderr, bare.stderr[-2000:]
        assert not store_rows(qa_env["QA_HOME"], "SELECT run_id FROM runs")
        (tmp_path / "qa.toml").write_text(QA_TOML)
        queued = run_qa(["run", "spec", "--detach", "--run-id", "gen-detached", "--json"], env, cwd=tmp_path)
        assert queued.returncode == 0, queued.stderr[-3000:]
        job_id = json.loads(queued.stdout)["job_id"]
        follow = run_qa(["status", "gen-detached", "--follow", "--timeout", "400"], env, cwd=tmp_path)
        assert follow.returncode == 0, follow.stderr[-3000:]
        assert "running in generate" in follow.stderr, follow.stderr  # qa status showed the generation
        st = json.loads(run_qa(["status", "gen-detached", "--json"], env, cwd=tmp_path).stdout)
        assert (st["status"], st["verdict"], st["env_name"]) == ("finished", "clean", "spec"), st
        show = json.loads(run_qa(["show", "gen-detached", "--json"], env, cwd=tmp_path).stdout)
        assert [v["author"] for v in show["versions"]] == [f"model:{MODEL}"]
        job = Job.fetch(job_id, connection=Redis.from_url(server.url))
        assert (job.origin, job.get_status()) == ("control", "finished") and job.worker_name
        calls = store_rows(qa_env["QA_HOME"], "SELECT queue, status FROM calls WHERE call_id LIKE 'generate-%'")
        assert calls == [{"queue": MODEL, "status": "done"}] and generator_asks(srv) == 1
    finally:
        pool.stop()
        server.cleanup()


def test_a_run_killed_during_generation_resumes_without_asking_the_generator_again(
    fake_provider, qa_env, tmp_path, docker_backend
):
    # A build that takes seconds (never cached: a fresh line each run), so the kill lands inside generation,
    # after the model answered.
    slow = {
        **GOOD,
        "environment/Dockerfile": f"FROM debian:bookworm\nRUN echo {uuid.uuid4().hex} && sleep 4\nWORKDIR /app\n",
    }
    srv = fake_provider({"models": {"claude-generator-test": {"turns": [answer(slow)]}}})
    env = dict(qa_env, ANTHROPIC_API_KEY=GOOD_KEY, ANTHROPIC_BASE_URL=srv.url)
    (tmp_path / "qa.toml").write_text(QA_TOML)
    write_spec(tmp_path / "spec")
    home = tmp_path / qa_env["QA_HOME"]
    proc = subprocess.Popen(
        [QA, "run", "spec", "--run-id", "gen-killed", "--json"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sigkill_when(
        proc,
        lambda: store_rows(home, "SELECT 1 FROM calls WHERE call_id LIKE 'generate-%' AND status = 'done'"),
        120,
        "the generator's answer stored",
    )
    assert not (home / "generated" / "gen-killed" / "generation.json").exists()  # killed inside generation
    assert store_rows(home, "SELECT status FROM runs WHERE run_id = 'gen-killed'") == [{"status": "running"}]
    assert generator_asks(srv) == 1

    resumed = run_qa(["run", "--resume", "gen-killed", "--json"], env, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = json.loads(resumed.stdout)
    assert report["verdict"] == "clean" and report["generation"]["passed"], report.get("generation")
    assert [a["stage"] for a in report["generation"]["attempts"]] == ["passed"]
    assert report["versions"][0]["author"] == f"model:{MODEL}"
    assert generator_asks(srv) == 1  # the stored answer was reused: the model was not asked again
