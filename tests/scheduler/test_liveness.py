"""Liveness with real worker processes: nothing the machinery does wrong makes a job or a run wait forever.

Each test reproduces one way issue 8's demo hung (a worker crash-looping on one job, a heartbeat thread
leaked per restart, a killed worker's job retried without end) and checks the bound that now holds.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from rq import Queue, Worker
from rq.job import Job
from rq.rate_limit import RateLimitRegistry

from envqa.scheduler.dispatch import rate_limit_key
from envqa.scheduler.rq_adapter import JOB_PREFIX

from .conftest import recorded, wait_for


def log_events(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def starts(events: list[dict], trial_id: str) -> list[dict]:
    return [e for e in events if e["ev"] == "start" and e["id"] == trial_id]


def slots_taken(conn, queue: str) -> int:
    """Jobs holding one of the queue's RateLimit slots (rq 3's `allowed` set)."""
    return RateLimitRegistry(rate_limit_key(queue), connection=conn).get_allowed_job_count()


@pytest.mark.parametrize(
    "action, stage, record_class",
    [
        ("bad-repeat", "success", None),  # the job ran; rq's success bookkeeping raises (rq 3's kind of break)
        ("bad-failure", "failure", "provider_error"),  # a permanent error; then rq's failure bookkeeping raises too
    ],
)
def test_a_job_whose_success_or_failure_handling_raises_fails_cleanly_within_its_attempts(
    make_cluster, action, stage, record_class
):
    c = make_cluster(defaults={"max_attempts": 3, "backoff_base_sec": 0.1})
    broken = c.submit("m/a", 0, script=[action])
    fine = c.submit("m/a", 1)
    pool = c.workers(1)
    c.wait_done(30)
    # read raw: the job left rq an attribute rq itself cannot load back (that is how its bookkeeping broke)
    wait_for(
        lambda: c.conn.hget(JOB_PREFIX + broken.trial_id, "status") == b"failed",
        15,
        f"the job whose {stage} bookkeeping raised to end failed in rq",
    )
    # the store records before rq's bookkeeping ends: await rq's status, with a deadline
    wait_for(
        lambda: Job.fetch(fine.trial_id, connection=c.conn).get_status() == "finished",
        15,
        "the healthy job to end finished in rq",
    )
    ev = c.events()
    assert len(starts(ev, broken.trial_id)) == 1  # failed at once, never re-pushed
    assert recorded(ev) == {broken.trial_id: 1, fine.trial_id: 1}
    fresh = [e.get("error_class") for e in ev if e["ev"] == "record" and e["id"] == broken.trial_id and e["fresh"]]
    assert fresh == [record_class], fresh  # the job's own pass, or the give-up hook's infra record
    wait_for(lambda: slots_taken(c.conn, "m/a") == 0, 15, "the failed job's slot to be given back")
    assert Queue("m/a", connection=c.conn).count == 0
    assert pool.alive() == pool.procs  # the worker carried on: its loop never ended
    logged = log_events(c.tmp / "worker-logs" / "worker-0.log")
    failed = [(e["stage"], e["error"][:9]) for e in logged if e.get("event") == "job.bookkeeping_failed"]
    # success: rq turns its own TypeError into the job's failure, and the failure callback ends it there;
    # failure: the policy's give-up sets the retry count rq reads, so rq's failure handling cannot trip
    assert failed == ([(stage, "TypeError")] if stage == "success" else []), failed
    assert not any(e.get("event") == "worker.restarting" for e in logged)


@pytest.mark.slow  # a long liveness / kill test: `make test-all`
def test_thread_count_stays_flat_across_50_forced_restarts_then_the_worker_exits_non_zero(make_cluster):
    # lease 1 s and no retry backoff: each crashed run comes back through rq's abandoned-job cleanup at once
    c = make_cluster(
        max_restarts=50,
        restart_window_sec=600,
        restart_backoff_sec=0.0,
        lease_ttl_sec=1,
        defaults={"max_attempts": 100, "backoff_base_sec": 0.0},
    )
    crasher = c.submit("m/a", 0, script=["crash"] * 100)  # takes the worker's loop down on every run
    pool = c.workers(1)
    proc = pool.procs[0]
    samples, clients = [], []

    def exited() -> bool:
        if proc.poll() is None:
            try:
                samples.append(threads_of(proc.pid))
            except FileNotFoundError:
                pass
            clients.append(len(c.conn.client_list()))
            return False
        return True

    wait_for(exited, 240, "the crash-looping worker to give up after max_restarts")
    assert proc.returncode == 3
    logged = log_events(c.tmp / "worker-logs" / "worker-0.log")
    restarts = [e for e in logged if e.get("event") == "worker.restarting"]
    assert len(restarts) == 50
    assert {e["threads"] for e in restarts} == {restarts[0]["threads"]}, [e["threads"] for e in restarts]
    assert max(samples) <= restarts[0]["threads"] + 2, (
        f"threads grew: {max(samples)} (first restart: {restarts[0]['threads']})"
    )
    assert max(clients) <= 8, f"Redis connections grew to {max(clients)}"
    assert any(e.get("event") == "worker.crash_loop" for e in logged)
    assert len(starts(c.events(), crasher.trial_id)) == 51  # every crash counted as an attempt
    assert Job.fetch(crasher.trial_id, connection=c.conn).meta["executions"] == 51


@pytest.mark.slow  # a long liveness / kill test: `make test-all`
def test_a_job_whose_worker_is_killed_10_times_ends_failed_after_max_attempts(make_cluster):
    c = make_cluster(lease_ttl_sec=1, defaults={"max_attempts": 10, "backoff_base_sec": 0.0})
    victim = c.submit("m/a", 0, script=["hang"] * 20)
    pool = c.workers(0)
    for kill in range(1, 11):
        proc = pool.spawn()
        wait_for(
            lambda kill=kill: len(starts(c.events(), victim.trial_id)) == kill, 60, f"run {kill} of the job to start"
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    pool.spawn()
    c.wait_done(60)
    trial = c.store.get_trial(victim.trial_id)
    assert (trial.outcome, trial.error_class) == ("infra", "worker_lost")
    assert "10 attempts" in trial.error_message
    assert len(starts(c.events(), victim.trial_id)) == 10  # never an 11th run
    wait_for(lambda: Job.fetch(victim.trial_id, connection=c.conn).get_status() == "failed", 15, "rq's failed status")
    wait_for(lambda: slots_taken(c.conn, "m/a") == 0, 15, "the last run's slot to be given back")
    assert Queue("m/a", connection=c.conn).count == 0


def test_a_worker_that_lost_its_lease_stops_the_job_and_it_is_recorded_once(make_cluster):
    c = make_cluster(lease_ttl_sec=1)
    job = c.submit("m/a", 0, latency_sec=6.0, calls=30)  # 30 billed calls, 0.2 s apart
    first = c.workers(1)
    wait_for(lambda: starts(c.events(), job.trial_id), 30, "the first worker to start the job")
    c.workers(1)
    wait_for(lambda: len(Worker.all(connection=c.conn)) == 2, 30, "the second worker to be up")
    # What rq's maintenance does when an execution's lease (heartbeat) expired, the holder hung: take the job
    # back as abandoned and retry it, so the other worker runs it. (A cutoff past the live lease forces it.)
    Queue("m/a", connection=c.conn).started_job_registry.cleanup(timestamp=time.time() + 60)
    c.wait_done(30)
    ev = c.events()
    # Either worker may take the job back: the one that lost the lease stops at once and polls again, so it can
    # win the race. What matters is per execution (n), not per process. With a 1 s lease a busy machine can let a
    # later execution's lease lapse too (seen in full-suite runs): more executions are allowed, but only the last
    # one records, and the one that lost its lease stops calling the model.
    first_run, *_, last_run = runs = starts(ev, job.trial_id)
    assert len(runs) >= 2, runs
    assert (first_run["n"], first_run["pid"]) == (1, first.procs[0].pid) and last_run["n"] >= 2
    taken = runs[1]["t"]
    late = [e for e in ev if e["ev"] == "call" and e["id"] == job.trial_id and e["n"] == 1 and e["t"] > taken + 1.0]
    assert late == [], f"the execution that lost the lease went on calling the model: {len(late)} calls"
    assert len([e for e in ev if e["ev"] == "call" and e["n"] == last_run["n"]]) == 30
    assert recorded(ev) == {job.trial_id: 1}
    assert [e["n"] for e in ev if e["ev"] == "record"] == [last_run["n"]]
    assert c.store.get_trial(job.trial_id).outcome == "pass"
    assert first.alive() == first.procs  # losing a lease stops the job, not the worker
    assert any(e.get("event") == "job.lease_lost" for e in log_events(c.tmp / "worker-logs" / "worker-0.log"))


def test_an_rq_job_timeout_reaches_the_retry_policy_as_a_timeout(make_cluster):
    c = make_cluster(defaults={"max_attempts": 2, "backoff_base_sec": 0.1, "jitter": 0.0})
    slow = c.submit("m/a", 0, script=["hang", "hang"], timeout_sec=1)
    c.workers(1)
    c.wait_done(30)
    trial = c.store.get_trial(slow.trial_id)
    assert (trial.outcome, trial.error_class) == ("infra", "job_timeout")
    assert len(starts(c.events(), slow.trial_id)) == 2  # transient: retried once, then given up
