"""A parked queue's job and the end of its park, through a real rq SimpleWorker on a real redis-server.

rq's scheduled registry keeps whole seconds, truncated: a job asked back for the end of a park (a 429's
Retry-After) is due up to a second before it. Such a job used to be parked again, and every job of the model came
back one to two seconds after the park had ended (benchmarks/scheduler.py: model c's storm). It now waits out the
rest of the park in place (under PARK_SETTLE_SEC), and still never runs before the Retry-After.
"""

from __future__ import annotations

import math
import time
from datetime import UTC

import pytest
from redis import Redis
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.registry import ScheduledJobRegistry

from envqa.core.config import SchedulerSettings
from envqa.core.defaults import PARK_SETTLE_SEC
from envqa.scheduler.dispatch import park
from envqa.scheduler.jobs import JobEnvelope, enqueue
from envqa.scheduler.queues import Keys

from .conftest import wait_for

SETTINGS = SchedulerSettings.model_validate({"models": {"m/a": {"concurrency": 1}}})


@pytest.fixture
def redis_conn(tmp_path, redis_server):
    server = redis_server(tmp_path / "redis")
    yield Redis.from_url(server.url)
    server.cleanup()


def _submit(conn: Redis, job_id: str) -> None:
    envelope = JobEnvelope(job_id=job_id, queue="m/a", func="envqa.scheduler.simulate.noop", payload={})
    assert enqueue(conn, envelope, SETTINGS)


def _park_end(conn: Redis) -> float:
    return int(conn.get(Keys.parked("m/a"))) / 1000


def test_a_job_back_just_before_its_park_ends_runs_right_after_it_not_a_round_later(redis_conn):
    park(redis_conn, "m/a", PARK_SETTLE_SEC / 2)  # what rq's truncated schedule hands back: under a second left
    until = _park_end(redis_conn)
    _submit(redis_conn, "j0")
    SimpleWorker([Queue("m/a", connection=redis_conn)], connection=redis_conn).work(burst=True)
    job = Job.fetch("j0", connection=redis_conn)
    assert job.get_status() == "finished"  # not handed back to rq's scheduler for another second or two
    ended = job.ended_at if job.ended_at.tzinfo else job.ended_at.replace(tzinfo=UTC)
    assert ended.timestamp() >= until  # and still not before the Retry-After
    assert job.meta["executions"] == 1 and "parks" not in job.meta


def test_a_job_with_more_than_the_settle_time_left_is_due_at_the_last_whole_second_of_its_park(redis_conn):
    park(redis_conn, "m/a", PARK_SETTLE_SEC + 2.5)
    until = _park_end(redis_conn)
    _submit(redis_conn, "j1")
    # rq dates the Retry from its own clock a moment after ours: start early in a second, so both read the same one
    wait_for(lambda: time.time() % 1 < 0.5, 2, "the first half of a second")
    SimpleWorker([Queue("m/a", connection=redis_conn)], connection=redis_conn).work(burst=True)
    assert Job.fetch("j1", connection=redis_conn).get_status() == "scheduled"
    assert time.time() < until  # the worker did not hold it for the park
    due = ScheduledJobRegistry("m/a", connection=redis_conn).get_scheduled_time("j1").timestamp()
    # rq's whole seconds: due at the park's last whole second, so rq's once-a-second scheduler brings it back
    # within a second of the end (and the rest is waited out in place), never a whole second after it
    assert due == math.floor(until)
