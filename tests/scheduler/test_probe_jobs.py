"""Hunt and gate probes are jobs on the `sandbox` queue: with REDIS_URL, an outside `qa worker` runs them.

One `qa run` on reward-tamper goes load -> validate -> hunt -> revise (mechanical fixer) -> gate and stops at
the approval checkpoint (exit 4). Every probe, the hunt's on version 1 and the gate's re-run on the candidate,
must have been executed by the worker process (its pid, recorded by the job itself; rq's job record names
the worker), never by the `qa run` process, each exploit trial recorded once; and what the hunt found and
what the gate decided must be what the same run finds in local mode (in-process, no Redis).
"""

from __future__ import annotations

import json

from redis import Redis
from rq.job import Job

from envqa.scheduler.embedded import WorkerPool
from qa_testkit import store_rows

from .conftest import copy_example, run_qa, wait_for

QA_TOML = """[probes]
enabled = ["static", "exploits"]
exploits = ["exploit-reward-tamper"]
[reviser]
gate_oracle_runs = 1
gate_replays = 0
"""


def _run(tmp_path, qa_env, name: str, extra: dict, monkeypatch) -> tuple[dict, list[dict], dict[str, dict]]:
    """(the report, the probes' `calls` rows, the trials) of one run, read from that run's own store."""
    work = tmp_path / name
    work.mkdir()
    env_dir = copy_example("reward-tamper", work)
    (work / "qa.toml").write_text(QA_TOML)
    env = {**qa_env, "QA_HOME": str(work / "qa-home"), **extra}
    out = run_qa(["run", str(env_dir), "--json", "--oracle-runs", "1"], env, timeout=400, cwd=work)
    assert out.returncode == 4, out.stderr[-3000:]  # stopped at the approval checkpoint, after the gate
    with monkeypatch.context() as m:
        if "QA_STORE_URL" in extra:
            m.setenv("QA_STORE_URL", extra["QA_STORE_URL"])
        calls = store_rows(
            env["QA_HOME"], "SELECT call_id, status, result_json FROM calls WHERE call_id LIKE 'probe-%'"
        )
        return json.loads(out.stdout.splitlines()[-1]), calls, _trials(env["QA_HOME"])


def _summary(report: dict, home_trials: dict[str, dict], calls: list[dict]) -> dict:
    """What the probes decided, independent of where they ran: findings, gate checks, exploit trials."""
    gate = report["awaiting_approval"]["proposal"]["gate"]
    per_version = sorted(
        (
            home_trials[t]["env_version"] == report["versions"][0]["version"],
            home_trials[t]["agent"],
            home_trials[t]["outcome"],
        )
        for c in calls
        for t in json.loads(c["result_json"])["trial_ids"]
    )
    return {
        "findings": sorted({f["rule"] for f in report["findings"]}),
        "gate": [(c["name"], c["passed"]) for c in gate["checks"]],
        "probe_trials": per_version,
    }


def _trials(home) -> dict[str, dict]:
    """The store's trial rows, each with its outcome read from its result (result_json is the one copy)."""
    rows = store_rows(home, "SELECT trial_id, env_version, agent, result_json FROM trials")
    return {r["trial_id"]: {**r, "outcome": json.loads(r["result_json"] or "{}").get("outcome")} for r in rows}


def test_hunt_and_gate_probes_run_on_a_worker_with_the_same_findings_as_local(
    tmp_path, qa_env, base_image, separate_store, monkeypatch, redis_server
):
    server = redis_server(tmp_path / "redis-server")
    pool = WorkerPool(server.url, 1, "sandbox", log_dir=tmp_path / "worker-logs").start()  # as the Procfile runs it
    try:
        report, calls, trials = _run(tmp_path, qa_env, "redis", {"REDIS_URL": server.url}, monkeypatch)
        worker_pids = {p.pid for p in pool.procs}
        conn = Redis.from_url(server.url)
        jobs = [Job.fetch(c["call_id"], connection=conn) for c in calls]
        # rq's own record: each probe was a finished job of the sandbox queue, run by a named worker (the store
        # records first, rq's bookkeeping ends a moment later: await it, with a deadline)
        wait_for(lambda: all(j.get_status() == "finished" for j in jobs), 15, "rq's finished status of each probe")
        assert jobs and all(j.origin == "sandbox" and j.worker_name for j in jobs)
    finally:
        pool.stop()
        server.cleanup()
    redis_home = tmp_path / "redis" / "qa-home"
    # hunt (version 1) and gate (the candidate): static + exploits each, all done, all on the worker
    assert len(calls) == 4 and {c["status"] for c in calls} == {"done"}
    outcomes = [json.loads(c["result_json"]) for c in calls]
    ran_by = {int(o["executed_by"].rsplit(":", 1)[1]) for o in outcomes}
    assert ran_by <= worker_pids, (ran_by, worker_pids)
    exploit_trials = [t for o in outcomes for t in o["trial_ids"]]
    versions = {trials[t]["env_version"] for t in exploit_trials}
    assert len(exploit_trials) == 2 and len(versions) == 2  # one exploit trial per version, recorded once
    assert {trials[t]["agent"] for t in exploit_trials} == {"exploit-reward-tamper"}
    attempts = store_rows(redis_home, "SELECT trial_id, attempts FROM trials WHERE agent='exploit-reward-tamper'")
    assert len(attempts) == 2

    # its own store: on Postgres the two runs would otherwise share this test's database (and its rows)
    local, local_calls, local_trials = _run(
        tmp_path, qa_env, "local", {"QA_SCHEDULER_MODE": "local", **separate_store}, monkeypatch
    )
    expected = _summary(local, local_trials, local_calls)
    assert "exploit-reward-tamper" in expected["findings"]
    assert ("rules", True) in expected["gate"]
    assert _summary(report, trials, calls) == expected
