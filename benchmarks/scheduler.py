"""Simulated sweep on the real scheduler: per-model queues vs a single global queue vs immediate retry.

Three models with different limits and latencies share one fleet of W worker processes (fewer than the
sum of the limits, as on a small machine). Model C suffers a storm of 429s with Retry-After for its first
two seconds; a few of model B's calls fail once with a 500. Jobs are `envqa.scheduler.simulate.sim_job`
(sleeps scaled down to 0.3-1 s), run by real `qa worker` processes on a real redis-server, and record
results in a real store. Every variant is measured in this run, from the last enqueue to the last result:

  ours              per-model queues and limits, a 429 parks only its model's queue, backoff for 500s
  global queue      one FIFO queue with one limit for all models; the only global limit that keeps every
                    model within its provider limit whatever the mix is the smallest one (min L); a 429
                    parks the one queue, so every model waits
  immediate retry   per-model queues and limits, but a 429 is handled the common way: the job sleeps
                    Retry-After while holding its worker and slot, then retries at once
  ideal             lower bound: max(max over models of storm + work/L, total work / W)

    .venv/bin/python benchmarks/scheduler.py
Last line: {"makespan_vs_ideal": …, "speedup_vs_global_queue": …, "speedup_vs_immediate_retry": …,
            "lost_trials": …}
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from redis import Redis

from envqa.config import SchedulerSettings
from envqa.models import TrialSpec
from envqa.scheduler.broker import Broker
from envqa.scheduler.embedded import RedisServer, WorkerPool
from envqa.scheduler.jobs import enqueue, publish_settings
from envqa.scheduler.simulate import SimJob, sim_envelope
from envqa.store.db import Store

WORKERS = 6
STORM_SEC = 2.0
# model -> (limit, jobs, latency seconds, jobs whose first call is a 500)
MODELS = {"bench/a": (2, 12, 1.00, 0), "bench/b": (4, 40, 0.30, 4), "bench/c": (3, 18, 0.60, 0)}
STORMY = "bench/c"
BACKOFF = {"backoff_base_sec": 0.05, "backoff_max_sec": 1.0, "jitter": 0.5, "max_attempts": 4}


def ideal_makespan() -> float:
    per_model, total = [], 0.0
    for model, (limit, n, lat, fails) in MODELS.items():
        work = n * lat + fails * lat / 4
        total += work
        per_model.append((STORM_SEC if model == STORMY else 0.0) + work / limit)
    return max(max(per_model), total / WORKERS)


def run_variant(name: str, server: RedisServer, tmp: Path) -> dict:
    conn = Redis.from_url(server.url)
    conn.flushdb()
    models = {m: {"concurrency": limit, **BACKOFF} for m, (limit, *_rest) in MODELS.items()}
    global_queue = "bench/global"
    models[global_queue] = {"concurrency": min(limit for limit, *_ in MODELS.values()), **BACKOFF}
    settings = SchedulerSettings(models=models, lease_ttl_sec=10, poll_interval_sec=0.02)
    broker = Broker(conn, settings.lease_ttl_sec)
    pool = WorkerPool(server.url, WORKERS, "*", settings_json=settings.model_dump_json(),
                      log_dir=tmp / name / "logs").start()
    db, log = tmp / name / "store.db", tmp / name / "events.jsonl"
    store = Store(db)
    try:
        _warm_up(conn, broker, settings, tmp / name)
        jobs = _jobs(name, db, log, global_queue)
        t0 = time.time()
        for job in jobs:
            job.storm_until = t0 + STORM_SEC if job.spec.model == STORMY else None
        with conn.pipeline():
            for job in jobs:
                enqueue(conn, broker, sim_envelope(job), settings)
        t_enqueued = time.time()
        ids = [j.spec.trial_id for j in jobs]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            states = store.trial_states(ids)
            if len(states) == len(ids) and all(s == "done" for s, _ in states.values()):
                break
            time.sleep(0.02)
        events = [json.loads(x) for x in log.read_text().splitlines()]
        last = max(e["t"] for e in events if e["ev"] == "record")
        fresh: dict[str, int] = {}
        for e in events:
            if e["ev"] == "record" and e["fresh"]:
                fresh[e["id"]] = fresh.get(e["id"], 0) + 1
        lost = sum(1 for i in ids if fresh.get(i, 0) != 1)
        passed = sum(1 for t in store.trials_for_run("bench") if t.outcome == "pass")
        return {"variant": name, "makespan": round(last - t0, 3), "enqueue_sec": round(t_enqueued - t0, 3),
                "lost": lost, "passed": passed, "jobs": len(ids),
                "extra_starts": sum(1 for e in events if e["ev"] == "start") - len(ids)}
    finally:
        pool.stop(grace=5)


def _warm_up(conn: Redis, broker: Broker, settings: SchedulerSettings, tmp: Path) -> None:
    """Every worker imports the job module and is polling before the clock starts."""
    publish_settings(broker, settings, "bench/warm")
    conn.hset("envqa:limits", "bench/warm", WORKERS)
    warm = [SimJob(spec=TrialSpec(run_id="warm", env_version="v", agent="sim", model="bench/warm", index=i),
                   db_path=str(tmp / "warm.db"), log_path=str(tmp / "warm.jsonl"), latency_sec=0.2)
            for i in range(WORKERS * 2)]
    for job in warm:
        enqueue(conn, broker, sim_envelope(job), settings)
    store = Store(tmp / "warm.db")
    deadline = time.monotonic() + 60
    while len(store.trials_for_run("warm")) < len(warm) and time.monotonic() < deadline:
        time.sleep(0.05)
    conn.delete("envqa:ewma")


def _jobs(variant: str, db: Path, log: Path, global_queue: str) -> list[SimJob]:
    per_model = []
    for model, (_limit, n, lat, fails) in MODELS.items():
        per_model.append([SimJob(spec=TrialSpec(run_id="bench", env_version="v", agent="sim", model=model, index=i),
                                 db_path=str(db), log_path=str(log), latency_sec=lat,
                                 script=["500"] if i < fails else [],
                                 retry_in_place=variant == "immediate_retry",
                                 queue=global_queue if variant == "global_queue" else None)
                          for i in range(n)])
    out = []  # interleaved, as a sweep submits them
    for i in range(max(len(x) for x in per_model)):
        out += [x[i] for x in per_model if i < len(x)]
    return out


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="envqa-bench-"))
    server = RedisServer(tmp / "redis").start()
    try:
        results = {}
        for name in ("ours", "global_queue", "immediate_retry"):
            results[name] = run_variant(name, server, tmp)
            print(json.dumps(results[name]), flush=True)
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    ideal = ideal_makespan()
    ours = results["ours"]["makespan"]
    print(f"ideal lower bound {ideal:.3f}s (W={WORKERS}, storm {STORM_SEC}s on {STORMY})")
    print(json.dumps({
        "makespan_vs_ideal": round(ours / ideal, 3),
        "speedup_vs_global_queue": round(results["global_queue"]["makespan"] / ours, 3),
        "speedup_vs_immediate_retry": round(results["immediate_retry"]["makespan"] / ours, 3),
        "lost_trials": results["ours"]["lost"],
        "makespan_sec": {"ideal": round(ideal, 3), **{k: v["makespan"] for k, v in results.items()}},
        "lost_trials_by_variant": {k: v["lost"] for k, v in results.items()},
    }))


if __name__ == "__main__":
    main()
