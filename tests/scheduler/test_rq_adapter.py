"""rq internals the scheduler relies on (scheduler/rq_adapter.py) exist in the installed rq, and work.

rq 3.0 added a required parameter to `handle_job_success`; every worker then crash-looped on its first
job. This test is where such a release fails now: first the attribute/signature check, then one real job
through the adapter's bookkeeping on a real redis-server, claimed through the broker's Lua script (which
shares rq's key layout).
"""

from __future__ import annotations

import os

import pytest
from redis import Redis
from rq import Queue
from rq.job import Job
from rq.worker import SimpleWorker

from envqa.core.config import SchedulerSettings
from envqa.scheduler import rq_adapter
from envqa.scheduler.broker import Broker
from envqa.scheduler.embedded import RedisServer
from envqa.scheduler.worker import QAWorker


@pytest.mark.fast
def test_the_installed_rq_has_every_internal_the_adapter_uses():
    assert rq_adapter.problems() == []


@pytest.mark.fast
def test_the_check_catches_a_signature_change_like_rq_3s(monkeypatch):
    # rq 3's handle_job_success(job, queue, started_job_registry, execution): shown as if we still passed 2
    monkeypatch.setattr(rq_adapter, "REQUIRED", [(SimpleWorker, "handle_job_success", ("job", "queue"))])
    assert any("now requires started_job_registry" in p for p in rq_adapter.problems())
    monkeypatch.setattr(rq_adapter, "REQUIRED", [(SimpleWorker, "no_such_step", ())])
    assert rq_adapter.problems() == ["SimpleWorker.no_such_step is gone"]


@pytest.fixture
def redis_conn(tmp_path):
    server = RedisServer(tmp_path / "redis").start()
    yield Redis.from_url(server.url)
    server.cleanup()


def test_a_job_claimed_by_the_broker_runs_through_the_adapters_bookkeeping(redis_conn):
    ok = Queue("m/a", connection=redis_conn).enqueue_call("os.getpid", job_id="job-ok", result_ttl=600)
    bad = Queue("m/a", connection=redis_conn).enqueue_call("os.getpid", job_id="job-bad", result_ttl=600)
    broker = Broker(redis_conn, 30)
    worker = QAWorker(["m/a"], connection=redis_conn, settings=SchedulerSettings())
    try:
        for job_id in (ok.id, bad.id):  # the claim script pops rq's own list and checks rq's job hash
            claim = broker.claim(["m/a"], default_limit=2)
            assert claim is not None and claim.job_id == job_id
            # the claim carries rq's job hash: the worker builds the job from it, no second round trip
            built = rq_adapter.job_from_hash(claim.job_id, claim.job_hash, redis_conn)
            assert (built.id, built.func_name, built.origin) == (job_id, "os.getpid", "m/a")
        assert broker.claim(["m/a"], default_limit=2) is None
        queue = Queue("m/a", connection=redis_conn)
        job = Job.fetch(ok.id, connection=redis_conn)
        rq_adapter.begin(worker, job)
        assert Job.fetch(ok.id, connection=redis_conn).get_status() == "started"
        with rq_adapter.time_limit(worker, 30, TimeoutError, job.id):
            value = job.perform()
        rq_adapter.finish_success(worker, job, queue, value)
        done = Job.fetch(ok.id, connection=redis_conn)
        assert done.get_status() == "finished" and done.return_value() == os.getpid()
        assert ok.id in queue.finished_job_registry.get_job_ids()

        job = Job.fetch(bad.id, connection=redis_conn)
        rq_adapter.begin(worker, job)
        rq_adapter.finish_failure(worker, job, queue, "Traceback: boom")
        failed = Job.fetch(bad.id, connection=redis_conn)
        assert failed.get_status() == "failed" and "boom" in failed.latest_result().exc_string
        assert bad.id in queue.failed_job_registry.get_job_ids()
        assert queue.started_job_registry.get_job_ids() == []
    finally:
        worker.close()
