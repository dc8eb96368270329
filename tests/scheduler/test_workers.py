"""Real redis-server, real `qa worker` processes, simulated jobs that log their own start/end times."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from rq import Queue, Worker

from envqa.core.models import TrialSpec
from envqa.scheduler.jobs import reconcile
from envqa.scheduler.queues import Keys
from envqa.scheduler.simulate import SimJob, sim_envelope

from .conftest import max_concurrency, recorded, wait_for

LIMITS = {"models": {"m/a": {"concurrency": 2}, "m/b": {"concurrency": 1}}, "lease_ttl_sec": 5}


def test_limits_hold_across_three_workers_and_each_result_is_recorded_once(make_cluster):
    c = make_cluster(**LIMITS)
    for i in range(8):
        c.submit("m/a", i, latency_sec=0.15)
        c.submit("m/b", i, latency_sec=0.05)
    c.workers(3)
    c.wait_done(60)
    ev = c.events()
    assert max_concurrency(ev, "m/a") == 2  # reached, never exceeded, across three processes
    assert max_concurrency(ev, "m/b") == 1
    assert len({e["pid"] for e in ev if e["ev"] == "start"}) == 3
    assert recorded(ev) == {s.trial_id: 1 for s in c.specs}
    assert len(c.store.trials_for_run("r1")) == 16


def test_a_parked_model_does_not_delay_the_others(make_cluster, tmp_path):
    c = make_cluster(models={"m/slow": {"concurrency": 2}, "m/fast": {"concurrency": 1}})
    c.workers(3)
    wait_for(lambda: len(Worker.all(connection=c.conn)) == 3, 30, "three workers up")
    storm_until = time.time() + 4.0
    slow = [c.submit("m/slow", i, latency_sec=0.05, storm_until=storm_until) for i in range(4)]
    fast = [c.submit("m/fast", i, latency_sec=0.1) for i in range(6)]
    wait_for(lambda: c.conn.get(Keys.parked("m/slow")), 10, "m/slow to be parked")
    out = subprocess.run(
        [sys.executable, "-m", "envqa.app.cli", "queues", "--json", "--url", c.server.url],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    rows = {r["queue"]: r for r in json.loads(out.stdout.splitlines()[-1])["queues"]}
    assert rows["m/slow"]["parked_until"] is not None and rows["m/fast"]["parked_until"] is None
    # all four still held: waiting, running, or (parked) in rq's scheduled registry until the Retry-After
    slow_row = rows["m/slow"]
    assert slow_row["limit"] == 2 and slow_row["depth"] + slow_row["delayed"] + slow_row["running"] == 4
    c.wait_done(10, fast)
    assert time.time() < storm_until, "the healthy model waited for the parked one"
    c.wait_done(30, slow)
    ev = c.events()
    slow_ids = {s.trial_id for s in slow}
    during = [e for e in ev if e["ev"] == "start" and e["id"] in slow_ids and e["t"] < storm_until - 0.05]
    assert len(during) <= 2, "a parked queue was claimed from before its Retry-After"
    assert recorded(ev) == {s.trial_id: 1 for s in c.specs}
    assert all(t.outcome == "pass" for t in c.store.trials_for_run("r1"))


def test_retries_back_off_and_permanent_errors_fail_fast(make_cluster):
    c = make_cluster(defaults={"max_attempts": 3, "backoff_base_sec": 0.3, "jitter": 0.0})
    flaky = c.submit("m/a", 0, script=["500", "500"])  # third try succeeds
    broken = c.submit("m/a", 1, script=["500"] * 5)  # never does: infra after 3 attempts
    denied = c.submit("m/a", 2, script=["auth"])  # permanent: one attempt
    c.workers(2)
    c.wait_done(30)
    ev = c.events()
    runs = {s.trial_id: [e for e in ev if e["ev"] == "start" and e["id"] == s.trial_id] for s in c.specs}
    assert [len(runs[s.trial_id]) for s in (flaky, broken, denied)] == [3, 3, 1]
    gaps = [b["t"] - a["t"] for a, b in zip(runs[flaky.trial_id], runs[flaky.trial_id][1:])]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6  # exponential backoff: 0.3 s, then 0.6 s
    got = {t.trial_id: t for t in c.store.trials_for_run("r1")}
    assert got[flaky.trial_id].outcome == "pass"
    assert (got[broken.trial_id].outcome, got[denied.trial_id].outcome) == ("infra", "infra")
    assert got[denied.trial_id].error_class == "provider_error" and "permanent" in got[denied.trial_id].error_message
    assert recorded(ev) == {s.trial_id: 1 for s in c.specs}


def test_kill_9_mid_job_runs_it_again_after_the_lease_and_records_once(make_cluster):
    c = make_cluster(models={"m/a": {"concurrency": 1}}, lease_ttl_sec=1.5)
    victim = c.submit("m/a", 0, script=["hang"], latency_sec=0.05)
    others = [c.submit("m/a", i, latency_sec=0.05) for i in (1, 2)]
    pool = c.workers(2)
    first = wait_for(
        lambda: next((e for e in c.events() if e["ev"] == "start" and e["id"] == victim.trial_id), None),
        20,
        "the victim job to start",
    )
    os.kill(first["pid"], signal.SIGKILL)
    killed_at = time.time()
    c.wait_done(30)
    ev = c.events()
    victim_starts = [e for e in ev if e["ev"] == "start" and e["id"] == victim.trial_id]
    assert len(victim_starts) == 2 and victim_starts[1]["pid"] != first["pid"]
    # the dead worker's slot (limit 1) stayed taken until its lease ran out: nothing started in between
    assert min(e["t"] for e in ev if e["ev"] == "start" and e["t"] > first["t"]) >= killed_at + 0.5
    assert max_concurrency(ev, "m/a", killed_at={(victim.trial_id, 1): killed_at}) == 1
    assert recorded(ev) == {s.trial_id: 1 for s in [victim, *others]}
    assert int(c.conn.hget("envqa:reclaimed", "m/a")) == 1
    assert len(pool.alive()) == 1


def test_redis_restart_then_reconcile_requeues_what_the_store_says_is_unfinished(make_cluster):
    c = make_cluster(models={"m/a": {"concurrency": 2}})
    c.workers(2)
    wait_for(lambda: len(Worker.all(connection=c.conn)) == 2, 30, "two workers up")
    c.server.stop()  # Redis dies with everything in it; the workers keep running and wait for it
    specs = [TrialSpec(run_id="r1", env_version="v1", agent="solver", model="m/a", index=i) for i in range(4)]
    for spec in specs:  # the store had them queued (one running) when Redis went away
        job = SimJob(spec=spec, db_path=str(c.db), log_path=str(c.log), latency_sec=0.05)
        c.store.mark_trial_queued(
            spec.trial_id, "r1", "v1", "solver", "m/a", "sweep", sim_envelope(job).model_dump_json()
        )
    c.store.mark_trial_running(specs[0].trial_id)
    c.server.start()  # same socket, empty: no persistence
    assert Queue("m/a", connection=c.conn).count == 0
    again = reconcile(c.store, c.conn, c.settings)
    assert sorted(again) == sorted(s.trial_id for s in specs)
    assert reconcile(c.store, c.conn, c.settings) == []  # Redis holds them now: no duplicates
    c.wait_done(30, specs)  # run by the workers that lived through the restart
    assert recorded(c.events()) == {s.trial_id: 1 for s in specs}
    assert all(p.poll() is None for p in c.pools[0].procs)
