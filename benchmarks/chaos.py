"""Chaos run on stock rq 3: 1,000 simulated trials on real workers across two "hosts" sharing only Redis and
Postgres.

Two pools of `qa worker` (rq's own SimpleWorker, envqa.scheduler.worker), each with its own QA_HOME (host A
and host B; no directory in common), take jobs from the same Redis (per-model queues, rq 3 RateLimit per
model) and record into the same Postgres store. While the trials run: 20 kill -9s of random workers (a
replacement starts, as a supervisor would restart it; the killed job's execution outlives no lease and comes
back through rq's own StartedJobRegistry cleanup and Retry), one Redis restart WITHOUT persistence (every
queue, rate-limit slot and job is gone: the store is the truth and reconcile re-enqueues what it says is
unfinished), and one Postgres restart (every connection cut). The submitter follows the store like `qa run`
does (envqa.scheduler.rq_executor: recover_abandoned + reconcile every few seconds).

Jobs are envqa.scheduler.simulate.sim_job (one simulated model call each, 0.05-0.25 s), which log their own
start/call/record events to a JSON-lines file of the benchmark (a measuring device, not part of the product).

    .venv/bin/python benchmarks/chaos.py [--trials 1000] [--kills 20] [--workers-per-host 3]
Last line: {"trials": 1000, "lost": 0, "recorded_twice": 0, "extra_model_calls": …, "gave_up": {class: n},
"makespan_s": …, …}. `gave_up`: trials that ended infra through their give-up hook (recorded, so not lost,
but no result). Exit 1 when any trial is lost or recorded twice, or the chaos did not all happen; on a miss
the temp dir (worker logs, the jobs' events) is kept and the unfinished trial ids are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from redis import Redis
from redis.exceptions import RedisError

from envqa.core.config import SchedulerSettings
from envqa.core.models import TrialSpec
from envqa.scheduler.embedded import RedisServer, WorkerPool
from envqa.scheduler.jobs import reconcile, recover_abandoned, submit
from envqa.scheduler.simulate import SimJob, sim_envelope
from envqa.store.db import Store
from envqa.store.pg_server import PostgresServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chaos_load import Load  # the benchmark's sibling, run as a script

RUN_ID = "chaos"
MODELS = {"chaos/a": 3, "chaos/b": 2, "chaos/c": 2}
DEADLINE_SEC = 600


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def settings() -> SchedulerSettings:
    return SchedulerSettings(
        models={
            m: {"concurrency": n, "backoff_base_sec": 0.2, "backoff_max_sec": 2.0, "max_attempts": 10}
            for m, n in MODELS.items()
        },
        lease_ttl_sec=3.0,
        poll_interval_sec=0.05,
    )


def _retrying(what, *args, tries: int = 600):
    """Submitter-side calls during a Redis/Postgres restart: wait for the service (bounded)."""
    for _ in range(tries):
        try:
            return what(*args)
        except (RedisError, ConnectionError):
            time.sleep(0.1)
    raise SystemExit(f"{what.__name__} kept failing for {tries / 10:.0f}s")


class Chaos(threading.Thread):
    """Kills, restarts, and the moments they happened (seconds after the start)."""

    def __init__(
        self, pools: list[WorkerPool], redis: RedisServer, pg: PostgresServer, kills: int, progress, rng: random.Random
    ):
        super().__init__(daemon=True)
        self.pools, self.redis, self.pg, self.kills, self.progress, self.rng = pools, redis, pg, kills, progress, rng
        self.log: list[tuple[float, str]] = []
        self.t0 = time.monotonic()
        self.done = threading.Event()

    def _note(self, what: str) -> None:
        self.log.append((round(time.monotonic() - self.t0, 2), what))

    def run(self) -> None:
        # kills spread over the first ~80% of the run (at least 0.4 s apart, each of a worker that has been up
        # for 2 s, so it is working rather than importing); Redis restarts at 35% done, Postgres at 60%
        marks = sorted(self.rng.uniform(0.02, 0.8) for _ in range(self.kills))
        redis_at, pg_at = 0.35, 0.6
        born: dict[int, float] = {}
        last_kill = 0.0
        while not self.done.is_set():
            p = self.progress()
            now = time.monotonic()
            for pool in self.pools:
                for proc in pool.alive():
                    born.setdefault(proc.pid, now)
            if marks and p >= marks[0] and now - last_kill >= 0.4:
                pool = self.rng.choice(self.pools)
                grown = [w for w in pool.alive() if now - born.get(w.pid, now) >= 2.0]
                if grown:
                    marks.pop(0)
                    victim = self.rng.choice(grown)
                    os.kill(victim.pid, signal.SIGKILL)
                    victim.wait(timeout=10)
                    pool.spawn()
                    last_kill = now
                    self._note(f"kill -9 worker {victim.pid}")
            if redis_at is not None and p >= redis_at:
                redis_at = None
                self.redis.stop()
                time.sleep(0.5)
                self.redis.start()
                self._note("redis restarted (empty)")
            if pg_at is not None and p >= pg_at:
                pg_at = None
                self.pg.restart()
                self._note("postgres restarted")
            for pool in self.pools:  # a worker that exited by itself is restarted too (a supervisor's job)
                for proc in list(pool.procs):
                    if proc.poll() is not None and proc not in getattr(pool, "_replaced", set()):
                        pool.__dict__.setdefault("_replaced", set()).add(proc)
                        if proc.returncode != -signal.SIGKILL:
                            pool.spawn()
                            self._note(f"worker {proc.pid} exited ({proc.returncode}); restarted")
            time.sleep(0.05)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--workers-per-host", type=int, default=3)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument(
        "--load",
        default="",
        help="load beside the run, started and stopped by pid: docker, cpu:N, io:N, comma separated "
        "(benchmarks/chaos_load.py); default none",
    )
    return ap.parse_args()


def start_pools(tmp: Path, redis: RedisServer, url: str, sched: SchedulerSettings, per_host: int) -> list[WorkerPool]:
    """Two "hosts": `qa worker` pools with their own QA_HOME, sharing only Redis and Postgres."""
    pools = []
    for host in ("host-a", "host-b"):
        (tmp / host).mkdir()
        pools.append(
            WorkerPool(
                redis.url,
                per_host,
                "*",
                settings_json=sched.model_dump_json(),
                env={"QA_HOME": str(tmp / host), "QA_STORE_URL": url},
                log_dir=tmp / host / "logs",
            ).start()
        )
    return pools


def follow(store: Store, conn: Redis, sched: SchedulerSettings, ids: list[str]) -> dict:
    """Wait for every trial like `qa run` does (envqa.scheduler.rq_executor), at most DEADLINE_SEC."""
    last_reconcile, deadline = time.monotonic(), time.monotonic() + DEADLINE_SEC
    while time.monotonic() < deadline:
        states = _retrying(store.trial_states, ids)
        if all(s == "done" for s, _ in states.values()) and len(states) == len(ids):
            break
        if time.monotonic() - last_reconcile > 2.0:  # what RQExecutor does while it follows a run
            recover_abandoned(conn, set(MODELS))  # logs and carries on when Redis is away
            _retrying(reconcile, store, conn, sched, RUN_ID)
            last_reconcile = time.monotonic()
        time.sleep(0.2)
    return store.trial_states(ids)


def run(args: argparse.Namespace, tmp: Path, rng: random.Random) -> tuple[list[str], dict, float, Chaos]:
    """Start the hosts, submit every trial while the chaos runs, follow them; (ids, states, makespan, chaos)."""
    pg = PostgresServer().start()
    redis = RedisServer(tmp / "redis", port=free_port()).start()  # restarted on the same port below
    url = pg.create_database("chaos")
    os.environ["QA_STORE_URL"] = url  # this process's store, and every worker's (inherited)
    events = tmp / "events.jsonl"
    sched = settings()
    pools: list[WorkerPool] = []
    try:
        pools = start_pools(tmp, redis, url, sched, args.workers_per_host)
        store = Store(url)
        conn = Redis.from_url(redis.url)
        models = list(MODELS)
        specs = [
            TrialSpec(run_id=RUN_ID, env_version="v1", agent="sim", model=models[i % len(models)], index=i)
            for i in range(args.trials)
        ]
        ids = [s.trial_id for s in specs]

        def progress() -> float:  # from the jobs' own log: it moves during submission and outages too
            return events.read_bytes().count(b'"ev": "record"') / len(ids) if events.exists() else 0.0

        chaos = Chaos(pools, redis, pg, args.kills, progress, rng)
        t0 = time.time()
        chaos.start()  # workers run jobs while the rest are still being submitted
        for spec in specs:
            job = SimJob(spec=spec, db_path=url, log_path=str(events), latency_sec=rng.uniform(0.05, 0.25))
            _retrying(submit, store, conn, spec, sim_envelope(job), sched)
        states = follow(store, conn, sched, ids)
        makespan = time.time() - t0
        chaos.done.set()
        chaos.join(timeout=60)
    finally:
        for pool in pools:
            pool.stop(grace=5)
        redis.cleanup()
        pg.cleanup()
    return ids, states, makespan, chaos


def tally(ids: list[str], states: dict, events: Path) -> dict:
    """Lost, recorded twice, and what the chaos cost, from the store and the jobs' own events."""
    evs = [json.loads(x) for x in events.read_text().splitlines() if x.strip()]
    fresh: dict[str, int] = {}
    gave_up: dict[str, int] = {}  # trials recorded as infra through their give-up hook instead of a result
    for e in evs:
        if e["ev"] == "record" and e.get("fresh"):
            fresh[e["id"]] = fresh.get(e["id"], 0) + 1
            if e.get("error_class"):
                gave_up[e["error_class"]] = gave_up.get(e["error_class"], 0) + 1
    unfinished = [i for i in ids if states.get(i, ("missing", 0))[0] != "done" or fresh.get(i, 0) == 0]
    return {
        "trials": len(ids),
        "lost": len(unfinished),
        "recorded_twice": sum(1 for n in fresh.values() if n > 1),
        "extra_model_calls": sum(1 for e in evs if e["ev"] == "call") - len(ids),  # what a provider bills
        "extra_executions": sum(1 for e in evs if e["ev"] == "start") - len(ids),  # killed ones included
        "gave_up": gave_up,
        "unfinished": unfinished,
    }


def main() -> None:
    args = parse_args()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="envqa-chaos-"))
    load = Load(args.load).start() if args.load else None
    try:
        ids, states, makespan, chaos = run(args, tmp, rng)
    finally:
        if load is not None:
            load.stop()
    out = tally(ids, states, tmp / "events.jsonl")
    unfinished = out.pop("unfinished")
    for when, what in chaos.log:
        print(f"{when:7.2f}s  {what}")
    out.update(
        makespan_s=round(makespan, 1),
        kills=sum(1 for _, what in chaos.log if what.startswith("kill")),
        redis_restarts=sum(1 for _, w in chaos.log if w.startswith("redis")),
        postgres_restarts=sum(1 for _, w in chaos.log if w.startswith("postgres")),
    )
    if load is not None:
        out["load"] = load.summary()
        load.cleanup()
    # A run whose chaos did not all happen proves less than it claims: that is a miss too.
    ok = not out["lost"] and not out["recorded_twice"] and out["kills"] == args.kills
    ok = ok and out["redis_restarts"] >= 1 and out["postgres_restarts"] >= 1
    if ok:
        shutil.rmtree(tmp, ignore_errors=True)
    else:  # what a miss needs to be understood: the workers' logs and the jobs' own events
        print(f"kept {tmp} (worker logs under host-*/logs, events.jsonl); not done: {unfinished[:20]}")
    print(json.dumps(out))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
