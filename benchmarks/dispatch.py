"""Overhead of envqa's scheduling layer (claims, leases, policy) over plain RQ, on 10,000 no-op jobs.

Both sides use the same redis-server (unix socket), the same enqueue (`Queue.enqueue_many`) and one
in-process worker in burst mode: rq's SimpleWorker popping the queue, and our QAWorker claiming through the
broker. Only the drain is timed. The machine is shared, so the jobs run in chunks that alternate
(rq, ours, ours, rq, ...): a burst of outside load hits both sides alike. Each side drains `--jobs` in all.

    .venv/bin/python benchmarks/dispatch.py [--jobs 10000] [--chunk 1000]
Last line: {"overhead_vs_rq": <our seconds / rq seconds>, ...}
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from redis import Redis
from rq import Queue
from rq.worker import SimpleWorker

from envqa.config import SchedulerSettings
from envqa.scheduler.broker import Broker
from envqa.scheduler.embedded import RedisServer
from envqa.scheduler.jobs import publish_settings
from envqa.scheduler.worker import QAWorker

QUEUE = "bench/noop"


def fill(conn: Redis, n: int) -> Queue:
    conn.flushdb()
    q = Queue(QUEUE, connection=conn)
    for start in range(0, n, 1000):
        q.enqueue_many([Queue.prepare_data("envqa.scheduler.simulate.noop", result_ttl=3600)
                        for _ in range(min(1000, n - start))])
    assert q.count == n
    return q


def drain_rq(conn: Redis, n: int) -> float:
    q = fill(conn, n)
    w = SimpleWorker([q], connection=conn)
    t0 = time.perf_counter()
    w.work(burst=True, logging_level="ERROR")
    took = time.perf_counter() - t0
    assert q.count == 0 and q.finished_job_registry.count == n, (q.count, q.finished_job_registry.count)
    return took


def drain_ours(conn: Redis, n: int) -> float:
    q = fill(conn, n)
    settings = SchedulerSettings(models={QUEUE: {"concurrency": 4}})
    w = QAWorker([QUEUE], connection=conn, settings=settings)
    publish_settings(Broker(conn), settings, QUEUE)
    t0 = time.perf_counter()
    w.work(burst=True, logging_level="ERROR")
    took = time.perf_counter() - t0
    assert q.count == 0 and q.finished_job_registry.count == n, (q.count, q.finished_job_registry.count)
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--chunk", type=int, default=1_000)
    args = ap.parse_args()
    server = RedisServer().start()
    rq_times, our_times = [], []
    try:
        conn = Redis.from_url(server.url)
        for i in range(args.jobs // args.chunk):
            sides = [(rq_times, drain_rq), (our_times, drain_ours)]
            for times, drain in (sides if i % 2 == 0 else sides[::-1]):
                times.append(drain(conn, args.chunk))
            print(f"chunk {i + 1}: rq {rq_times[-1]:.2f}s  envqa {our_times[-1]:.2f}s", flush=True)
    finally:
        server.cleanup()
    rq_s, ours_s = sum(rq_times), sum(our_times)
    per_chunk = statistics.median(o / r for o, r in zip(our_times, rq_times))
    print(json.dumps({"overhead_vs_rq": round(ours_s / rq_s, 3), "median_chunk_ratio": round(per_chunk, 3),
                      "jobs_per_side": len(rq_times) * args.chunk, "rq_seconds": round(rq_s, 2),
                      "envqa_seconds": round(ours_s, 2), "rq_jobs_per_sec": round(len(rq_times) * args.chunk / rq_s),
                      "envqa_jobs_per_sec": round(len(our_times) * args.chunk / ours_s)}))


if __name__ == "__main__":
    main()
