"""Overhead of envqa's scheduling layer over stock rq 3 with the same features, uncontended and contended.

Like with like: both sides run rq's own SimpleWorker with its scheduler (`with_scheduler`) and the same
logging (rq's WARNING and above: what `qa worker` prints; rq's per-job INFO lines cost as much as a job),
rq's worker heartbeats and result storage (result_ttl 3600), rq 3's RateLimit with the same concurrency per queue, and
rq's Retry for the failures. What only ours adds is what is measured: the product's enqueue
(envqa.scheduler.jobs.enqueue: policy in job.meta, the failure callback that records a give-up), its job
wrapper (envqa.scheduler.dispatch.run_envelope: the park check, the execution count, the process-wide beat thread that
keeps the execution's heartbeat at lease_ttl, SIGTERM hand-back) and its worker wrapper
(envqa.scheduler.worker.run_worker). Same redis-server (a free 127.0.0.1 port, started here), same job
functions; only the drain is timed. Redis commands are counted by Redis itself (CONFIG RESETSTAT before the
drain, INFO commandstats after), minus the benchmark's own few commands.

  uncontended  one worker process, one queue, a limit (4) that never binds, no failures
  contended    4 worker processes, two queues with limits 2 and 1 (3 slots for 4 workers: the limits bind),
               10% of the jobs fail once and are retried at once (rq: Retry(max=1); envqa: its policy with a
               zero backoff, which it turns into the same Retry)

The machine is shared, so the sides alternate (rq, ours, ours, rq, ...): a burst of outside load hits
both alike.

    .venv/bin/python benchmarks/dispatch.py [--jobs 500] [--contended-jobs 400] [--rounds 6]
Last line: {"overhead_vs_rq": ..., "overhead_vs_rq_contended": ..., "redis_cmds_per_job": ...,
            "rq_redis_cmds_per_job": ..., ...}; goal: both overheads <= 1.2 (exit 1 when missed).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from redis import Redis
from rq import Queue, Retry, SimpleWorker
from rq.rate_limit import RateLimit

from envqa.core.config import SchedulerSettings
from envqa.scheduler.embedded import RedisServer
from envqa.scheduler.jobs import JobEnvelope, enqueue
from envqa.scheduler.worker import run_worker

GOAL = 1.2
HERE = Path(__file__).resolve().parent
QUEUE = "bench/noop"
UNCONTENDED_LIMIT = 4
CONTENDED = {"bench/q1": 2, "bench/q2": 1}
CONTENDED_WORKERS = 4
FAIL_EVERY = 10  # every 10th job fails once
NOOP = "envqa.scheduler.simulate.noop"
FLAKY = "bench_jobs.flaky"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def our_settings(limits: dict[str, int]) -> SchedulerSettings:
    return SchedulerSettings(
        models={
            q: {"concurrency": n, "backoff_base_sec": 0.0, "jitter": 0.0, "max_attempts": 2} for q, n in limits.items()
        }
    )


def fill(side: str, conn: Redis, limits: dict[str, int], n: int, fail_every: int = 0) -> None:
    """n jobs round-robin over the queues; not timed."""
    conn.flushdb()
    queues = list(limits)
    settings = our_settings(limits)
    for i in range(n):
        q = queues[i % len(queues)]
        func = FLAKY if fail_every else NOOP
        payload = {"fail": i % fail_every == 0} if fail_every else {}
        if side == "ours":
            enqueue(conn, JobEnvelope(job_id=f"j{i}", queue=q, func=func, payload=payload, timeout_sec=600), settings)
        else:
            Queue(q, connection=conn).enqueue(
                func,
                kwargs={"payload": payload},
                job_id=f"j{i}",
                job_timeout=600,
                result_ttl=3600,
                rate_limit=RateLimit(q, concurrency=limits[q]),
                retry=Retry(max=1) if fail_every else None,
            )


def finished(conn: Redis, queues: list[str]) -> int:
    return sum(Queue(q, connection=conn).finished_job_registry.count for q in queues)


def commands(conn: Redis) -> int:
    stats = conn.info("commandstats")
    return sum(v["calls"] for k, v in stats.items() if k not in ("cmdstat_info", "cmdstat_config"))


def drain(
    side: str, conn: Redis, url: str, limits: dict[str, int], n: int, workers: int, fail_every: int, logs: Path
) -> tuple[float, int]:
    """Fill (not timed), start `workers` worker processes that wait for a go signal, then time the drain.
    Each side's workers run in processes of their own, so neither inherits the other's logging set-up."""
    queues = list(limits)
    fill(side, conn, limits, n, fail_every=fail_every)
    settings = our_settings(limits)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    procs = []
    for i in range(workers):
        with open(logs / f"{side}-{i}.log", "ab") as out:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        str(HERE / "bench_jobs.py"),
                        side,
                        url,
                        ",".join(queues),
                        settings.model_dump_json(),
                    ],
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            )
    try:
        deadline = time.monotonic() + 60
        while int(conn.get("bench:ready") or 0) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise SystemExit(f"{side}: benchmark workers did not start (logs under {logs})")
            time.sleep(0.02)
        time.sleep(0.2)  # every worker is inside BLPOP: its wait is not counted below
        conn.config_resetstat()
        t0 = time.perf_counter()
        conn.rpush("bench:go", *["go"] * workers)
        for p in procs:
            p.wait(timeout=600)
        if finished(conn, queues) < n:  # a burst worker may exit while a failed job waits for its retry
            if side == "rq":
                SimpleWorker([Queue(q, connection=conn) for q in queues], connection=conn).work(
                    burst=True, logging_level="WARNING", with_scheduler=True
                )
            else:
                run_worker(conn, queues, settings, burst=True)
        took = time.perf_counter() - t0
    finally:
        for p in procs:  # only our own worker processes, by pid
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
    cmds = commands(conn) - 1 - workers  # our RPUSH and the workers' BLPOPs
    if finished(conn, queues) != n:
        raise SystemExit(f"{side}: {finished(conn, queues)} of {n} jobs finished on {queues}")
    return took, cmds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=500, help="uncontended jobs per side and round")
    ap.add_argument("--contended-jobs", type=int, default=400, help="contended jobs per side and round")
    ap.add_argument("--rounds", type=int, default=6, help="short alternating rounds: outside load hits both sides")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="envqa-bench-dispatch-"))
    server = RedisServer(tmp / "redis", port=free_port()).start()
    t = dict.fromkeys(("rq", "ours", "rq_c", "ours_c"), 0.0)
    c = dict.fromkeys(t, 0)
    try:
        conn = Redis.from_url(server.url)
        for i in range(args.rounds):
            order = ("rq", "ours") if i % 2 == 0 else ("ours", "rq")
            for side in order:
                took, cmds = drain(side, conn, server.url, {QUEUE: UNCONTENDED_LIMIT}, args.jobs, 1, 0, tmp)
                t[side] += took
                c[side] += cmds
            for side in order[::-1]:
                took, cmds = drain(
                    side, conn, server.url, CONTENDED, args.contended_jobs, CONTENDED_WORKERS, FAIL_EVERY, tmp
                )
                t[f"{side}_c"] += took
                c[f"{side}_c"] += cmds
            print(
                f"round {i + 1}: uncontended rq {t['rq']:.2f}s envqa {t['ours']:.2f}s | "
                f"contended rq {t['rq_c']:.2f}s envqa {t['ours_c']:.2f}s (cumulative)",
                flush=True,
            )
    finally:
        server.cleanup()
    n_u, n_c = args.jobs * args.rounds, args.contended_jobs * args.rounds
    out = {
        "overhead_vs_rq": round(t["ours"] / t["rq"], 3),
        "overhead_vs_rq_contended": round(t["ours_c"] / t["rq_c"], 3),
        "redis_cmds_per_job": round(c["ours"] / n_u, 2),
        "rq_redis_cmds_per_job": round(c["rq"] / n_u, 2),
        "redis_cmds_per_job_contended": round(c["ours_c"] / n_c, 2),
        "rq_redis_cmds_per_job_contended": round(c["rq_c"] / n_c, 2),
        "jobs_per_side": {"uncontended": n_u, "contended": n_c},
        "seconds": {k: round(v, 2) for k, v in t.items()},
    }
    out["goal_met"] = out["overhead_vs_rq"] <= GOAL and out["overhead_vs_rq_contended"] <= GOAL
    print(json.dumps(out))
    sys.exit(0 if out["goal_met"] else 1)


if __name__ == "__main__":
    main()
