"""The windows in which a worker killed with -9 left its job undone (issue 32 item 6), each driven exactly,
in-process, with rq's own steps on a real redis-server: no kill timing to hope for.

1. rq 3 registers the job's execution (`prepare_execution`, rq's heartbeat: timeout + 60 s) a few round trips
   before it marks the job STARTED (`prepare_job_execution`). A worker dead in between leaves a QUEUED job that
   rq's `StartedJobRegistry.cleanup` drops without a retry: in no queue (a worker on several queues pops with
   BLPOP) or in the queue's intermediate list (one queue: BLMOVE; rq's own sweep retries it after a minute).
2. A worker whose name was never marked watched (killed before its beat thread's first beat, e.g. right after
   an idle `--queues '*'` loop restarted under a new name) kept its execution for rq's timeout + 60 s: longer
   than the chaos benchmark's 600 s deadline.
"""

from __future__ import annotations

import time

import pytest
from redis import Redis
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.registry import StartedJobRegistry

from envqa.core.config import SchedulerSettings
from envqa.scheduler import lease
from envqa.scheduler.jobs import JobEnvelope, enqueue
from envqa.scheduler.lease import Beater, alive_key, expire_dead, leased_key
from envqa.scheduler.queues import normalize_queue

from .conftest import wait_for

LEASE = 0.5
NOOP = "envqa.scheduler.simulate.noop"


def _queues(conn: Redis, names: list[str]) -> list[Queue]:
    return [Queue(normalize_queue(q), connection=conn) for q in names]


@pytest.fixture
def conn(tmp_path, redis_server, monkeypatch):
    # a job run here gives the process's beat thread this Redis; it goes back to what it had after the test
    monkeypatch.setattr(lease.BEATER, "conn", lease.BEATER.conn)
    monkeypatch.setattr(lease.BEATER, "worker", lease.BEATER.worker)
    return Redis.from_url(redis_server(tmp_path / "redis").url)


def _settings() -> SchedulerSettings:
    return SchedulerSettings.model_validate({"lease_ttl_sec": LEASE, "models": {"m/a": {"concurrency": 2}}})


def _half_started(conn: Redis, queues: list[str], name: str) -> tuple[Job, str]:
    """What an rq worker does up to the window and no further: pop the job, register its execution."""
    for q in queues:
        envelope = JobEnvelope(job_id="job-" + q.replace("/", "-"), queue=q, func=NOOP, payload={})
        enqueue(conn, envelope, _settings())
    worker = SimpleWorker(_queues(conn, queues), connection=conn, name=name)
    job, queue = Queue.dequeue_any(worker.queues, timeout=1, connection=conn)
    execution = worker.prepare_execution(job)
    assert job.get_status(refresh=True) == "queued"  # rq has not marked it started: the window
    return job, execution.composite_key


def _on_queue(conn: Redis, job: Job) -> bool:
    return conn.lpos(Queue(job.origin, connection=conn).key, job.id) is not None


@pytest.mark.parametrize("queues", [["m/a"], ["m/a", "m/b"]], ids=["one-queue-blmove", "two-queues-blpop"])
def test_rqs_own_cleanup_drops_a_job_whose_worker_died_before_it_was_marked_started(conn, queues):
    """The rq behaviour the fix is for (tests/scheduler/test_rq_adapter.py's kind: it fails on an rq release
    that changes it, which is the moment to look at rq_adapter.requeue_unstarted again)."""
    job, composite = _half_started(conn, queues, "dead-1")
    registry = StartedJobRegistry(job.origin, connection=conn)
    conn.zadd(registry.key, {composite: 1})  # expired
    registry.cleanup()
    assert conn.zscore(registry.key, composite) is None
    assert job.get_status(refresh=True) == "queued" and not _on_queue(conn, job)  # in no queue: nobody runs it


@pytest.mark.parametrize("queues", [["m/a"], ["m/a", "m/b"]], ids=["one-queue-blmove", "two-queues-blpop"])
def test_a_watched_worker_dead_before_rq_marked_its_job_started_gets_the_job_requeued(conn, queues):
    job, composite = _half_started(conn, queues, "dead-2")
    conn.set(leased_key("dead-2"), 1)  # a qa worker that beat once, then died: no alive key
    wait_for(lambda: expire_dead(conn) == [composite], 10, "the dead worker's execution to be taken back")
    assert _on_queue(conn, job) and job.get_status(refresh=True) == "queued"
    assert conn.lpos(Queue(job.origin, connection=conn).intermediate_queue_key, job.id) is None
    assert conn.zscore(StartedJobRegistry(job.origin, connection=conn).key, composite) is None
    assert expire_dead(conn) == []  # once
    SimpleWorker(_queues(conn, queues), connection=conn).work(burst=True)
    assert job.get_status(refresh=True) == "finished"


def test_a_live_worker_in_the_same_window_keeps_its_job(conn):
    job, composite = _half_started(conn, ["m/a"], "alive-1")
    conn.set(leased_key("alive-1"), 1)
    conn.set(alive_key("alive-1"), 1, px=60_000)
    time.sleep(LEASE * 2)  # the lease has run out: only the alive key keeps it (nothing to await: it must not move)
    assert expire_dead(conn) == []
    assert conn.zscore(StartedJobRegistry(job.origin, connection=conn).key, composite) is not None
    assert not _on_queue(conn, job)


def test_a_job_already_back_on_its_queue_is_not_pushed_twice(conn):
    job, composite = _half_started(conn, ["m/a", "m/b"], "dead-3")
    conn.lpush(Queue(job.origin, connection=conn).key, job.id)  # the follower's reconcile put it back first
    conn.set(leased_key("dead-3"), 1)
    wait_for(lambda: expire_dead(conn) == [composite], 10, "the dead worker's execution to be taken back")
    assert conn.lrange(Queue(job.origin, connection=conn).key, 0, -1).count(job.id.encode()) == 1


def test_a_worker_never_seen_beating_loses_its_job_after_its_unwatched_grace(conn, monkeypatch):
    monkeypatch.setattr(lease, "UNWATCHED_MIN_SEC", 1.0)
    monkeypatch.setattr(lease, "UNWATCHED_LEASES", 2)
    job, composite = _half_started(conn, ["m/a", "m/b"], "never-beat")  # no leased mark, no alive key
    t0 = time.monotonic()
    assert expire_dead(conn) == []  # within its grace
    wait_for(lambda: expire_dead(conn) == [composite], 10, "the never-watched worker's execution to be taken back")
    assert time.monotonic() - t0 >= 0.9
    assert _on_queue(conn, job)


def test_watching_a_worker_marks_it_before_returning(conn):
    """`qa worker` calls watch_worker right before rq's loop, which may start a job a few round trips later:
    the mark cannot wait for the beat thread's first beat."""
    beater = Beater()
    try:
        beater.watch_worker(conn, "fresh-round", LEASE)
        assert conn.exists(leased_key("fresh-round")) and conn.exists(alive_key("fresh-round"))
    finally:
        with beater._lock:  # quiet the thread: it outlives this test's Redis
            beater.conn = beater.worker = None
