"""One follow loop (envqa.scheduler.follow) for trials, probe jobs and model calls (issue 32 item 1): a model call
(the reviser, the generator) gets the stall check trials have and a deadline from config, and ends in a clear
error instead of waiting up to an hour.
"""

from __future__ import annotations

import time

import pytest
from redis import Redis
from rq import Queue, SimpleWorker

from envqa.core.config import QAConfig
from envqa.core.errors import InfraError
from envqa.core.executor import Call
from envqa.scheduler.follow import Liveness, follow, live_queues
from envqa.scheduler.lease import alive_key, leased_key
from envqa.scheduler.queues import queue_for_model
from envqa.scheduler.rq_executor import RQExecutor
from envqa.store.db import Store

CALL = Call(call_id="call-1", model="anthropic/reviser", func="envqa.scheduler.simulate.noop", args={})


def _executor(tmp_path, url: str, events: list | None = None, **scheduler) -> RQExecutor:
    config = QAConfig(home=tmp_path / "qa-home")
    for key, value in scheduler.items():
        setattr(config.scheduler, key, value)
    sink = (lambda name, **kw: events.append(name)) if events is not None else None
    return RQExecutor(config, Store(config.db_path), url, on_event=sink)


@pytest.fixture
def url(tmp_path, redis_server) -> str:
    return redis_server(tmp_path / "redis").url


def test_a_model_call_nobody_serves_ends_stalled_naming_its_queue(tmp_path, url):
    events: list = []
    executor = _executor(tmp_path, url, events, stall_timeout_sec=2.0)
    t0 = time.monotonic()
    with pytest.raises(InfraError) as err:
        executor.run_call(CALL)  # the default deadline is the config's hour: the stall check ends it first
    assert err.value.error_class == "stalled"
    assert queue_for_model(CALL.model) in str(err.value) and "qa worker --queues" in str(err.value)
    assert time.monotonic() - t0 < 30


def test_a_model_calls_deadline_comes_from_config_and_ends_in_a_timeout(tmp_path, url):
    executor = _executor(tmp_path, url, stall_timeout_sec=0.0, call_deadline_sec=1.0)  # no stall limit: the deadline
    t0 = time.monotonic()
    with pytest.raises(InfraError) as err:
        executor.run_call(CALL)
    assert err.value.error_class == "timeout" and "call_deadline_sec" in str(err.value)
    assert 1.0 <= time.monotonic() - t0 < 20


def test_a_worker_killed_with_9_is_not_a_live_listener_though_rq_still_lists_it(url):
    conn = Redis.from_url(url)
    worker = SimpleWorker([Queue("m-a", connection=conn)], connection=conn, name="w-killed")
    worker.register_birth()  # in rq's list until its key expires (worker_ttl)
    conn.set(leased_key("w-killed"), 1)  # a qa worker that beat ...
    conn.set(alive_key("w-killed"), 1, px=60_000)
    assert live_queues(conn) == {"m-a"}
    conn.delete(alive_key("w-killed"))  # ... then died: its alive key ran out
    assert live_queues(conn) == set()
    plain = SimpleWorker([Queue("m-b", connection=conn)], connection=conn, name="w-stock")
    plain.register_birth()  # a stock rq worker, never watched: rq's list is all we know
    assert live_queues(conn) == {"m-b"}


@pytest.mark.fast
def test_follow_returns_false_at_its_deadline_and_lets_liveness_errors_through():
    reconciled: list = []
    live = Liveness(lambda: None, QAConfig().scheduler, lambda *a, **k: None)  # no stall check within 1 s
    done = follow(
        lambda: {"q"}, reconciled.append, live, deadline=time.monotonic() + 0.3, poll_sec=0.01, reconcile_sec=0.1
    )
    assert done is False and reconciled and all(r == {"q"} for r in reconciled)

    def dead() -> None:
        raise InfraError("the embedded workers died", "workers_down")

    with pytest.raises(InfraError, match="workers died"):
        follow(
            lambda: {"q"},
            reconciled.append,
            Liveness(lambda: None, QAConfig().scheduler, lambda *a, **k: None, watchdog=dead),
            deadline=time.monotonic() + 60,
            poll_sec=0.01,
            reconcile_sec=60,
        )
    left = iter([{"q"}, {"q"}, set()])
    assert follow(
        lambda: next(left), reconciled.append, live, deadline=time.monotonic() + 60, poll_sec=0.01, reconcile_sec=60
    )
