"""A sweep's model calls through envqa's scheduler vs stock rq 3 with one global queue, same provider.

The workload is fixed here, before any run (WORKLOAD). Three models with different limits and latencies
call the fake provider (envqa.demo.provider_server, a real HTTP server, reached through the product's own
OpenAI adapter, so a 429's Retry-After and a 500 become RateLimited / TransientProviderError as in a trial):

  bench/a  limit 2, 20 calls of 1.0 s
  bench/b  limit 4, 60 calls of 0.4 s; 6 of them answer 500 once (a transient failure, retried)
  bench/c  limit 3, 36 calls of 0.75 s. The PROVIDER enforces c's limit itself (429 + Retry-After 1 s to a
           request beyond 3 in progress), and c starts in a storm: every request within STORM_SEC of c's
           first one gets 429 + Retry-After STORM_SEC.

Both sides get W = the sum of the limits = 9 worker processes of the same class (rq's SimpleWorker: no fork
per job), a fresh provider and a flushed redis-server (started here, on a free 127.0.0.1 port), the same
interleaved submission order and the same job body (benchmarks/bench_jobs.py provider_call); each is timed
from its first enqueue to its last recorded result, after a warm-up on the same queues.

  ours          the product: `qa worker` x W (WorkerPool) on per-model queues, `enqueue` with the limits
                (rq 3 RateLimit per model), a 429 parks that model's queue for its Retry-After, transient
                errors retry with backoff 1, 2, 4, 8, 16 s (jitter 0)
  global queue  what a competent rq 3 user sets up without our layer: `rq worker --with-scheduler` x W on
                ONE queue, every job enqueued with rq 3's own RateLimit(model, limit) (the same limits:
                rq 3 has them, so not using them would be a straw man) and Retry(max=5, interval=[1, 2, 4,
                8, 16]): a 429 is a failure like any other, retried on the backoff, spending an attempt
  ideal         lower bound: max over models of (storm + work / limit), and total work / W

Measured from the provider's own request log: `over_limit_requests` = requests of OURS that arrived
while the model already had `limit` in progress (refused with 429 by c's enforcement, or merely counted
for a and b), and the baseline's 429s. `lost_trials`: calls of ours with no recorded result, or two.

    .venv/bin/python benchmarks/scheduler.py
Last line: {"makespan_vs_ideal": …, "speedup_vs_global_queue": …, "lost_trials": …, "over_limit_requests":
…, "baseline_429s": …, …}. Goals: makespan_vs_ideal <= 1.10, lost_trials == 0, over_limit_requests == 0
and speedup_vs_global_queue > 1.0 (reported whatever it is); exit 1 on any miss.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from redis import Redis
from rq import Queue, Retry
from rq.rate_limit import RateLimit

from envqa.core.config import SchedulerSettings
from envqa.demo.provider_server import FakeProviderServer
from envqa.demo.script import Script
from envqa.scheduler.embedded import RedisServer, WorkerPool
from envqa.scheduler.jobs import JobEnvelope, enqueue

HERE = Path(__file__).resolve().parent
# model -> (limit, calls, latency seconds, calls whose first request answers 500)
WORKLOAD = {"bench/a": (2, 20, 1.00, 0), "bench/b": (4, 60, 0.40, 6), "bench/c": (3, 36, 0.75, 0)}
ENFORCED = "bench/c"  # the provider enforces this model's limit itself (429 + Retry-After)
ENFORCED_RETRY_AFTER = 1.0
STORM_SEC = 3.0  # c's storm: every request within this many seconds of c's first one gets 429
FAULT_DELAY = 0.1  # a 500 answers after this long
BACKOFF = [1, 2, 4, 8, 16]  # both sides' transient-retry delays (rq's Retry takes whole seconds)
WORKERS = sum(limit for limit, *_ in WORKLOAD.values())
GLOBAL_QUEUE = "bench-global"
WARM_MODEL = "bench/warm"  # the provider model the warm-up calls (no faults, no limit, no storm)
GOALS = {"makespan_vs_ideal": 1.10, "speedup_vs_global_queue": 1.0}
WAIT_SEC = 240  # per side: a bound, far above either side's makespan


def provider_script() -> Script:
    models: dict = {WARM_MODEL: {"turns": [{"text": "warm", "delay": 0.1}]}}
    for model, (limit, n, lat, fails) in WORKLOAD.items():
        entry: dict = {"turns": [{"text": "ok", "delay": lat}], "faults": []}
        if fails:  # spread over the run: the 500s hit calls early, midway and late
            entry["faults"] = [
                {"status": 500, "delay": FAULT_DELAY, "after": i * n // fails, "times": 1} for i in range(fails)
            ]
        if model == ENFORCED:
            entry.update(concurrency=limit, concurrency_retry_after=ENFORCED_RETRY_AFTER)
            entry["faults"].insert(0, {"status": 429, "retry_after": STORM_SEC, "times": -1, "window_sec": STORM_SEC})
        models[model] = entry
    return Script.model_validate({"models": models})


def ideal_makespan() -> float:
    per_model, total = [], 0.0
    for model, (limit, n, lat, fails) in WORKLOAD.items():
        work = n * lat + fails * FAULT_DELAY
        total += work
        per_model.append((STORM_SEC if model == ENFORCED else 0.0) + work / limit)
    return max(max(per_model), total / WORKERS)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _payloads(provider_url: str, log: Path, marks: Path, warm: bool = False) -> list[dict]:
    per_model = []
    for model, (limit, n, *_r) in WORKLOAD.items():
        count = limit * 2 if warm else n
        per_model.append(
            [
                {
                    "id": f"{'warm-' if warm else ''}{model.replace('/', '-')}-{i}",
                    "model": model,
                    "limit": limit,
                    "provider_model": WARM_MODEL if warm else model,
                    "url": provider_url,
                    "log": str(log),
                    "marks": str(marks),
                }
                for i in range(count)
            ]
        )
    out = []  # interleaved, as a sweep submits them
    for i in range(max(len(x) for x in per_model)):
        out += [x[i] for x in per_model if i < len(x)]
    return out


def our_settings() -> SchedulerSettings:
    return SchedulerSettings(
        models={
            m: {
                "concurrency": limit,
                "backoff_base_sec": float(BACKOFF[0]),
                "backoff_max_sec": float(BACKOFF[-1]),
                "jitter": 0.0,
                "max_attempts": len(BACKOFF) + 1,
            }
            for m, (limit, *_r) in WORKLOAD.items()
        },
        lease_ttl_sec=10,
    )


def _submit(variant: str, conn: Redis, payloads: list[dict]) -> None:
    settings = our_settings()
    q = Queue(GLOBAL_QUEUE, connection=conn)
    for p in payloads:
        if variant == "ours":
            enqueue(
                conn,
                JobEnvelope(
                    job_id=p["id"], queue=p["model"], func="bench_jobs.provider_call", payload=p, timeout_sec=600
                ),
                settings,
            )
        else:
            q.enqueue(
                "bench_jobs.provider_call",
                kwargs={"payload": p},
                job_id=p["id"],
                job_timeout=600,
                result_ttl=3600,
                rate_limit=RateLimit(p["model"], concurrency=p["limit"]),
                retry=Retry(max=len(BACKOFF), interval=BACKOFF),
            )


def _events(log: Path) -> list[dict]:
    return [json.loads(x) for x in log.read_text().splitlines() if x.strip()] if log.exists() else []


def _wait_settled(log: Path, conn: Redis, variant: str, ids: list[str], timeout: float, procs: list) -> list[dict]:
    """Until every call is recorded, or (the baseline can give up on a call) every job has ended."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = [p for p in procs if p.poll() is not None]
        if dead:  # a worker only exits on its own when it cannot work: waiting on would only burn the bound
            raise SystemExit(
                f"{variant}: worker pid {dead[0].pid} exited with code {dead[0].returncode} (logs under {log.parent})"
            )
        events = _events(log)
        if {e["id"] for e in events if e["ev"] == "record"} >= set(ids):
            return events
        if variant == "global_queue":
            q = Queue(GLOBAL_QUEUE, connection=conn)
            failed = set(q.failed_job_registry.get_job_ids())
            if failed and {e["id"] for e in events if e["ev"] == "record"} | failed >= set(ids):
                return events
        time.sleep(0.05)
    return _events(log)


def _start_workers(variant: str, url: str, logs: Path, env: dict) -> tuple[WorkerPool | None, list]:
    if variant == "ours":
        pool = WorkerPool(
            url, WORKERS, "*", settings_json=our_settings().model_dump_json(), env=env, log_dir=logs / "workers"
        ).start()
        return pool, []
    rq_bin = str(Path(sys.executable).with_name("rq"))
    procs = []
    for i in range(WORKERS):
        out = open(logs / f"rq-worker-{i}.log", "wb")
        procs.append(
            subprocess.Popen(
                [
                    rq_bin,
                    "worker",
                    "--with-scheduler",
                    "-w",
                    "rq.worker.SimpleWorker",
                    "-u",
                    url,
                    "--quiet",
                    GLOBAL_QUEUE,
                ],
                env={**os.environ, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        out.close()
    return None, procs


def _stop_workers(pool: WorkerPool | None, procs: list) -> None:
    if pool is not None:
        pool.stop(grace=5)
    for p in procs:  # only the processes this benchmark started, by their pid
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=5)


def run_variant(variant: str, server: RedisServer, tmp: Path) -> dict:
    conn = Redis.from_url(server.url)
    conn.flushdb()
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])),
        "OPENAI_API_KEY": "sk-bench",
    }
    logs = tmp / variant
    (logs / "marks").mkdir(parents=True)
    provider = FakeProviderServer(provider_script()).start()
    pool, procs = _start_workers(variant, server.url, logs, env)
    workers = pool.procs if pool is not None else procs
    try:
        # warm-up on the same queues (a different provider model): every worker has imported the job
        # module and the SDK, and polls the benchmark's queues, before the clock starts
        warm = _payloads(provider.url, logs / "warm.jsonl", logs / "marks", warm=True)
        _submit(variant, conn, warm)
        warmed = _wait_settled(logs / "warm.jsonl", conn, variant, [p["id"] for p in warm], 120, workers)
        if {e["id"] for e in warmed if e["ev"] == "record"} < {p["id"] for p in warm}:
            raise SystemExit(f"{variant}: the warm-up did not finish within 120 s (logs under {logs})")
        n_warm = len(provider.requests)
        log = logs / "events.jsonl"
        payloads = _payloads(provider.url, log, logs / "marks")
        ids = [p["id"] for p in payloads]
        t0 = time.time()
        _submit(variant, conn, payloads)
        events = _wait_settled(log, conn, variant, ids, WAIT_SEC, workers)
    finally:
        _stop_workers(pool, procs)
        provider.stop()
    requests = [r for r in provider.requests[n_warm:] if r["model"] in WORKLOAD]
    records = [e for e in events if e["ev"] == "record"]
    fresh: dict[str, int] = {}
    for e in records:
        fresh[e["id"]] = fresh.get(e["id"], 0) + int(e["fresh"])
    over = sum(1 for r in requests if r.get("over_limit") or (r.get("inflight") or 0) > WORKLOAD[r["model"]][0])
    return {
        "variant": variant,
        "makespan": round(max(e["t"] for e in records) - t0, 3) if records else None,
        "lost": sum(1 for i in ids if fresh.get(i, 0) != 1),
        "jobs": len(ids),
        "requests": len(requests),
        "over_limit_requests": over,
        "429s": sum(1 for r in requests if r["status"] == 429),
        "500s": sum(1 for r in requests if r["status"] == 500),
    }


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="envqa-bench-sched-"))
    server = RedisServer(tmp / "redis", port=free_port()).start()
    try:
        results = {}
        for name in ("ours", "global_queue"):
            results[name] = run_variant(name, server, tmp)
            print(json.dumps(results[name]), flush=True)
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    ideal = ideal_makespan()
    ours, base = results["ours"], results["global_queue"]
    print(f"ideal lower bound {ideal:.3f}s (W={WORKERS}, storm {STORM_SEC}s on {ENFORCED})")
    out = {
        "makespan_vs_ideal": round(ours["makespan"] / ideal, 3) if ours["makespan"] else None,
        "speedup_vs_global_queue": (
            round(base["makespan"] / ours["makespan"], 3) if ours["makespan"] and base["makespan"] else None
        ),
        "lost_trials": ours["lost"],
        "over_limit_requests": ours["over_limit_requests"],
        "baseline_429s": base["429s"],
        "ours_429s": ours["429s"],
        "baseline_lost_trials": base["lost"],
        "baseline_over_limit_requests": base["over_limit_requests"],
        "workers": WORKERS,
        "makespan_sec": {"ideal": round(ideal, 3), "ours": ours["makespan"], "global_queue": base["makespan"]},
    }
    out["misses"] = [
        k
        for k, ok in (
            ("makespan_vs_ideal", (out["makespan_vs_ideal"] or 1e9) <= GOALS["makespan_vs_ideal"]),
            ("speedup_vs_global_queue", (out["speedup_vs_global_queue"] or 0) > GOALS["speedup_vs_global_queue"]),
            ("lost_trials", out["lost_trials"] == 0),
            ("over_limit_requests", out["over_limit_requests"] == 0),
        )
        if not ok
    ]
    out["goal_met"] = not out["misses"]
    print(json.dumps(out))
    sys.exit(0 if out["goal_met"] else 1)


if __name__ == "__main__":
    main()
