"""An idle `qa worker --queues '*'` restarted its rq loop every 1-2 s (issue 32 item 6): each restart is a new
rq worker, a forked rq scheduler and a new name. The idle wait now doubles while the queue list stays the same,
within one lease (rq's maintenance, which takes abandoned jobs back, runs between two waits)."""

from __future__ import annotations

import pytest

from envqa.core.config import SchedulerSettings
from envqa.core.defaults import IDLE_RELOAD_MAX_SEC, IDLE_RELOAD_SEC
from envqa.scheduler.worker import _next_idle_wait

pytestmark = pytest.mark.fast


def _waits(lease: float, rounds: int = 8) -> list[int]:
    settings = SchedulerSettings(lease_ttl_sec=lease)
    waits, wait = [], IDLE_RELOAD_SEC
    for _ in range(rounds):
        wait = _next_idle_wait(wait, False, ["a"], ["a"], settings)
        waits.append(wait)
    return waits


def test_the_idle_wait_grows_while_nothing_changes_up_to_one_lease():
    assert _waits(30.0) == [2, 3, 3, 3, 3, 3, 3, 3] and IDLE_RELOAD_MAX_SEC == 3
    assert _waits(2.0) == [2] * 8
    assert set(_waits(1.0)) == {1}  # a 1 s lease: every second, as before


def test_a_new_queue_or_a_job_brings_the_wait_back_to_a_second():
    settings = SchedulerSettings(lease_ttl_sec=30.0)
    assert _next_idle_wait(8, False, ["a"], ["a", "b"], settings) == IDLE_RELOAD_SEC
    assert _next_idle_wait(8, True, ["a"], ["a"], settings) == IDLE_RELOAD_SEC
