"""What to do when a job raises: park its queue, retry later, or give up. Pure functions, no Redis.

Rate limits are the provider's capacity, not the job's fault: they park the whole model queue and spend no
attempt. Transient failures retry with exponential backoff and jitter up to `max_attempts`. Permanent ones
(auth, invalid request, a bug in our code) fail at once: retrying cannot help and only burns budget.
"""

from __future__ import annotations

import random
import sqlite3
from enum import StrEnum
from typing import TypeVar

from pydantic import BaseModel

from envqa.core.config import QueueSettings
from envqa.core.errors import InfraError, InputError, ProviderError, ProviderOverloaded, RateLimited
from envqa.core.models import Outcome, TrialResult
from envqa.core.registry import TRANSIENT_INFRA  # infra error classes worth another try (the error-class registry)

_T = TypeVar("_T")

__all__ = [
    "TRANSIENT_INFRA",
    "Action",
    "Decision",
    "backoff",
    "decide",
    "decide_trial",
    "error_class_of",
    "is_transient",
    "trial_error",
]


class Action(StrEnum):
    PARK = "park"
    RETRY = "retry"
    FAIL = "fail"


class Decision(BaseModel):
    action: Action
    delay_sec: float = 0.0  # park: how long the queue sleeps; retry: backoff before the job is eligible
    error_class: str
    reason: str


def error_class_of(exc: BaseException) -> str:
    if isinstance(exc, InfraError):
        return exc.error_class
    if type(exc).__name__ == "JobTimeoutException":
        return "job_timeout"
    return "job_error"


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, ProviderError):
        return exc.transient
    if isinstance(exc, InputError):
        return False
    if isinstance(exc, InfraError):
        return exc.error_class in TRANSIENT_INFRA
    if type(exc).__name__ == "JobTimeoutException":
        return True
    if isinstance(exc, sqlite3.OperationalError):  # the store was busy (another writer): contention passes
        return any(word in str(exc) for word in ("locked", "busy"))
    return isinstance(exc, (TimeoutError, ConnectionError))


def _resolved(value: _T | None, name: str) -> _T:
    """A queue setting the caller must have resolved (config's defaults fill every field before a policy is used)."""
    if value is None:
        raise ValueError(f"queue policy: {name} is unset (resolve the queue's settings against the defaults first)")
    return value


def backoff(failures: int, policy: QueueSettings, rng: random.Random | None = None) -> float:
    """Delay before retry number `failures` (1-based): base * 2^(n-1), capped, minus up to `jitter` of it."""
    base = _resolved(policy.backoff_base_sec, "backoff_base_sec")
    raw = min(_resolved(policy.backoff_max_sec, "backoff_max_sec"), base * (2 ** max(0, failures - 1)))
    return raw * (1.0 - _resolved(policy.jitter, "jitter") * (rng or random).random())


def decide(exc: BaseException, failures: int, parks: int, policy: QueueSettings) -> Decision:
    """`failures`/`parks` count what happened before this exception."""
    cls = error_class_of(exc)
    if isinstance(exc, (RateLimited, ProviderOverloaded)):
        if parks + 1 > _resolved(policy.max_parks, "max_parks"):
            return Decision(action=Action.FAIL, error_class=cls, reason=f"still rate limited after {parks} parks")
        wait = (
            exc.retry_after if exc.retry_after is not None else _resolved(policy.park_default_sec, "park_default_sec")
        )
        return Decision(
            action=Action.PARK, delay_sec=max(0.0, float(wait)), error_class=cls, reason="provider asked us to wait"
        )
    if not is_transient(exc):
        return Decision(action=Action.FAIL, error_class=cls, reason="permanent error: retrying cannot help")
    if failures + 1 >= _resolved(policy.max_attempts, "max_attempts"):
        return Decision(action=Action.FAIL, error_class=cls, reason=f"gave up after {failures + 1} attempts")
    return Decision(
        action=Action.RETRY, delay_sec=backoff(failures + 1, policy), error_class=cls, reason="transient error"
    )


def trial_error(result: TrialResult) -> InfraError | None:
    """The error a finished trial stands for when the machinery hiccuped (infra with a transient class: a sandbox
    that failed to start or vanished under load), else None: its outcome stands. A queued trial raises it for the
    worker's policy (`decide`); a probe's trial asks `decide_trial`: one rule for both."""
    if result.outcome == Outcome.INFRA and result.error_class in TRANSIENT_INFRA:
        return InfraError(result.error_message or result.error_class, result.error_class)
    return None


def decide_trial(result: TrialResult, failures: int, policy: QueueSettings) -> Decision | None:
    """What to do with a finished trial run in place (a probe's): None keeps its result; else `decide` on its
    error, as a queued trial's worker would (retry after the same backoff, or give up after `max_attempts`).
    `failures` counts the attempts before this one."""
    error = trial_error(result)
    return None if error is None else decide(error, failures, 0, policy)
