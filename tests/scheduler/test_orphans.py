"""A pool whose parent is killed -9 leaves no process behind (issue 22: `qa worker` processes, PPid 1, were
found alive after the dataset and approval tests, ignoring SIGTERM while rq retried a dead Redis socket).

The parent here is a small process that starts a pool the way embedded mode does (WorkerPool, so the workers
carry QA_WORKER_PARENT_PID), either with its own Redis (which dies with it: the embedded case) or with the
test's (which stays up: a shared Redis). Everything that carries the parent's pid in its environment is a
worker or a process a worker forked (rq's scheduler): all of it must be gone within the grace period.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from redis import Redis
from rq import Worker

from envqa.scheduler.embedded import PARENT_ENV
from envqa.scheduler.worker import PARENT_GRACE_SEC

from .conftest import wait_for

PARENT = textwrap.dedent("""
    import json, sys, time
    from envqa.scheduler.embedded import RedisServer, WorkerPool
    url, log_dir = sys.argv[1], sys.argv[2]
    if url.startswith("own:"):  # dies with this process (PR_SET_PDEATHSIG), as embedded mode's does
        url = RedisServer(url[4:]).start().url
    pool = WorkerPool(url, 2, "*", log_dir=__import__("pathlib").Path(log_dir)).start()
    if sys.argv[3] == "busy":  # each worker inside a long job when the parent dies
        from redis import Redis
        from rq import Queue
        from envqa.scheduler.queues import Keys
        conn = Redis.from_url(url)
        conn.sadd(Keys.QUEUES, "m/busy")
        for _ in range(2):
            Queue("m/busy", connection=conn).enqueue("time.sleep", 120, job_timeout=300)
    print(json.dumps({"url": url, "workers": [p.pid for p in pool.procs]}), flush=True)
    time.sleep(300)  # killed by the test long before this
""")


def pool_processes(parent: int) -> list[int]:
    """Pids whose environment names `parent` as their pool's parent: workers and what they forked."""
    found = []
    mark = f"{PARENT_ENV}={parent}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if mark in (proc / "environ").read_bytes().split(b"\x00"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("redis,state", [("own", "idle"), ("shared", "idle"), ("own", "busy"), ("shared", "busy")])
def test_killing_a_pools_parent_ends_its_workers_and_their_children(tmp_path, redis, state, redis_server):
    shared = redis_server(tmp_path / "redis") if redis == "shared" else None
    url = shared.url if shared else f"own:{tmp_path / 'own-redis'}"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, url, str(tmp_path / "logs"), state],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    left: list[int] = []
    try:
        info = json.loads(parent.stdout.readline())
        conn = Redis.from_url(info["url"])
        wait_for(lambda: len(Worker.all(connection=conn)) == 2, 60, "both pool workers to be up")
        if state == "busy":
            wait_for(
                lambda: [w.get_state() for w in Worker.all(connection=conn)] == ["busy", "busy"],
                60,
                "both workers to be inside their job",
            )
        # rq forks its scheduler from a worker: wait until at least one exists (a child of a worker)
        wait_for(lambda: len(pool_processes(parent.pid)) > 2, 60, "rq's scheduler process to be forked")
        before = pool_processes(parent.pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = PARENT_GRACE_SEC + 20
        try:
            wait_for(lambda: not pool_processes(parent.pid), deadline, "every process of the pool to end")
        finally:
            left = pool_processes(parent.pid)
        assert set(info["workers"]) <= set(before)
    finally:
        for pid in left:  # only processes of this test's pool, by pid
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if parent.poll() is None:
            parent.kill()
            parent.wait(timeout=10)
        if shared is not None:
            shared.cleanup()


def children_of(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def test_a_worker_killed_9_takes_rqs_scheduler_process_with_it(make_cluster):
    """rq forks its scheduler from the worker; killed -9, the worker used to leave it running (PPid 1, still
    holding the scheduler locks and heartbeating a live Redis)."""
    c = make_cluster(lease_ttl_sec=2)
    pool = c.workers(1)
    worker = pool.procs[0]
    forked = wait_for(lambda: children_of(worker.pid), 60, "rq's scheduler process to be forked")
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=10)
    try:
        wait_for(
            lambda: not [p for p in forked if Path(f"/proc/{p}").exists() and _is_pool(p, c.server.url)],
            PARENT_GRACE_SEC + 20,
            "the killed worker's scheduler process to end",
        )
    finally:
        for pid in forked:  # this test's worker's children only, by pid
            if _is_pool(pid, c.server.url):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _is_pool(pid: int, url: str) -> bool:
    try:
        return url.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
