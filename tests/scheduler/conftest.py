"""Scheduler fixtures: a real redis-server per test (unix socket in tmp_path) and real worker processes.

`Cluster` submits simulated jobs (envqa.scheduler.simulate) through the same code path as trials, waits on
the store, and reads back the start/end/record events the jobs logged themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redis import Redis

from envqa.core.config import SchedulerSettings
from envqa.core.models import TrialSpec
from envqa.scheduler.embedded import WorkerPool
from envqa.scheduler.jobs import submit
from envqa.scheduler.simulate import SimJob, sim_envelope
from envqa.store.db import Store
from qa_testkit import QA, REPO, copy_example, run_qa, wait_for  # noqa: F401  (re-exported)


def workers_with_home(home: str) -> list[int]:
    """Pids of live `qa worker` processes started for this QA_HOME (embedded mode must stop them all). rq's
    scheduler, forked by a worker, shares its command line: it counts as part of its live parent, and as a
    worker of its own once orphaned (a leftover)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes()
            env = (proc / "environ").read_bytes()
        except OSError:
            continue
        if b"envqa.app.cli\x00worker" in cmd and f"QA_HOME={home}".encode() in env.split(b"\x00"):
            found.append(int(proc.name))
    return [pid for pid in found if _parent(pid) not in found]


def _parent(pid: int) -> int | None:
    try:
        return int((Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


class Cluster:
    def __init__(self, tmp: Path, settings: SchedulerSettings, start_redis):
        self.tmp, self.settings = tmp, settings
        self.server = start_redis(tmp / "redis")
        self.conn = Redis.from_url(self.server.url)
        self.db = tmp / "store.db"
        self.store = Store(self.db)
        self.log = tmp / "events.jsonl"
        self.pools: list[WorkerPool] = []
        self.specs: list[TrialSpec] = []

    def workers(self, n: int, queues: str = "*") -> WorkerPool:
        pool = WorkerPool(
            self.server.url, n, queues, settings_json=self.settings.model_dump_json(), log_dir=self.tmp / "worker-logs"
        ).start()
        self.pools.append(pool)
        return pool

    def submit(self, model: str | None, index: int, **sim) -> TrialSpec:
        spec = TrialSpec(run_id="r1", env_version="v1", agent="solver", model=model, index=index)
        job = SimJob(spec=spec, db_path=str(self.db), log_path=str(self.log), **sim)
        submit(self.store, self.conn, spec, sim_envelope(job), self.settings)
        self.specs.append(spec)
        return spec

    def all_done(self, specs=None) -> bool:
        ids = [s.trial_id for s in (specs or self.specs)]
        states = self.store.trial_states(ids)
        return len(states) == len(ids) and all(st == "done" for st, _ in states.values())

    def wait_done(self, timeout: float = 60, specs=None) -> None:
        wait_for(lambda: self.all_done(specs), timeout, "all trials recorded")

    def events(self) -> list[dict]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]

    def close(self) -> None:
        for pool in self.pools:
            pool.stop(grace=5)
        self.server.cleanup()


def max_concurrency(events: list[dict], queue: str, killed_at: dict[tuple, float] | None = None) -> int:
    """Largest number of executions of `queue` whose [start, end] intervals overlap, from the jobs' own logs."""
    starts = {(e["id"], e["n"]): e["t"] for e in events if e["ev"] == "start" and e["queue"] == queue}
    ends = {(e["id"], e["n"]): e["t"] for e in events if e["ev"] == "end" and e["queue"] == queue}
    ends.update(killed_at or {})
    points = []
    for key, t0 in starts.items():
        points += [(t0, 1), (ends.get(key, float("inf")), -1)]
    running = peak = 0
    for _, delta in sorted(points, key=lambda p: (p[0], p[1])):  # an end at t frees before a start at t
        running += delta
        peak = max(peak, running)
    return peak


def recorded(events: list[dict]) -> dict[str, int]:
    """trial id -> number of times its result was freshly written to the store."""
    out: dict[str, int] = {}
    for e in events:
        if e["ev"] == "record":
            out[e["id"]] = out.get(e["id"], 0) + (1 if e["fresh"] else 0)
    return out


@pytest.fixture
def make_cluster(tmp_path, redis_server):
    made: list[Cluster] = []

    def make(**settings) -> Cluster:
        c = Cluster(tmp_path, SchedulerSettings.model_validate(settings), redis_server)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
