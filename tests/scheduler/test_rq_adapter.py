"""The rq API the scheduler relies on (scheduler/rq_adapter.py) exists in the installed rq, and works.

rq 3.0 added a required parameter to `handle_job_success`; the old QAWorker, which drove it, then crash-looped
on its first job. The scheduler now uses documented rq API only, listed in `REQUIRED`: this test is where a
release that drops or changes any of it fails, first by signature, then with one real job through a real
rq SimpleWorker on a real redis-server (RateLimit slot taken and given back, the lease heartbeat renewed).
"""

from __future__ import annotations

import pytest
from redis import Redis
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.rate_limit import RateLimitRegistry

from envqa.core.config import SchedulerSettings
from envqa.scheduler import rq_adapter
from envqa.scheduler.dispatch import rate_limit_key
from envqa.scheduler.jobs import JobEnvelope, enqueue


@pytest.mark.fast
def test_the_installed_rq_has_every_api_the_scheduler_uses():
    assert rq_adapter.problems() == []


@pytest.mark.fast
def test_the_check_catches_a_signature_change_like_rq_3s(monkeypatch):
    # rq 3's handle_job_success(job, queue, started_job_registry, execution): shown as if we still passed 2
    monkeypatch.setattr(rq_adapter, "REQUIRED", [(SimpleWorker, "handle_job_success", ("job", "queue"))])
    assert any("now requires started_job_registry" in p for p in rq_adapter.problems())
    monkeypatch.setattr(rq_adapter, "REQUIRED", [(SimpleWorker, "no_such_step", ())])
    assert rq_adapter.problems() == ["SimpleWorker.no_such_step is gone"]


@pytest.fixture
def redis_conn(tmp_path, redis_server):
    server = redis_server(tmp_path / "redis")
    yield Redis.from_url(server.url)
    server.cleanup()


def test_a_job_runs_on_a_stock_simple_worker_within_its_rate_limit(redis_conn):
    settings = SchedulerSettings.model_validate({"models": {"m/a": {"concurrency": 1}}})
    for i in range(2):
        enqueue(
            redis_conn,
            JobEnvelope(job_id=f"j{i}", queue="m/a", func="envqa.scheduler.simulate.noop", payload={}),
            settings,
        )
    limiter = RateLimitRegistry(rate_limit_key("m/a"), connection=redis_conn)
    # limit 1: one job on rq's queue, the other held back by the RateLimit
    assert (Queue("m/a", connection=redis_conn).count, limiter.get_rate_limited_job_count()) == (1, 1)
    assert not enqueue(
        redis_conn, JobEnvelope(job_id="j0", queue="m/a", func="envqa.scheduler.simulate.noop", payload={}), settings
    )  # held: never a second copy
    SimpleWorker([Queue("m/a", connection=redis_conn)], connection=redis_conn).work(burst=True)
    assert [Job.fetch(f"j{i}", connection=redis_conn).get_status() for i in range(2)] == ["finished"] * 2
    assert (limiter.get_allowed_job_count(), limiter.get_rate_limited_job_count()) == (0, 0)


def test_restarted_work_loops_in_one_process_leave_no_pubsub_thread(redis_conn):
    import threading

    from envqa.scheduler.worker import make_worker

    before = threading.active_count()
    for _ in range(5):
        worker = make_worker(redis_conn, ["m/a"], SchedulerSettings())
        worker.work(burst=True, logging_level="WARNING")
        assert rq_adapter.release_pubsub(worker)
        assert threading.active_count() == before, sorted(t.name for t in threading.enumerate())
