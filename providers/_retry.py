"""The adapters' own retry of transient failures; rate limits are never retried here.

The SDKs' built-in retries are switched off (max_retries=0) because they would sleep through a
Retry-After inside a worker; a 429 must instead reach the scheduler as RateLimited so it parks the
model's queue. 5xx and connection errors get a few quick retries with exponential backoff.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import structlog

from envqa.core.defaults import PROVIDER_RETRY_BACKOFF_SEC
from envqa.core.errors import TransientProviderError
from envqa.providers.errors import classify
from envqa.providers.registry import TRANSPORT, sdk_packages

T = TypeVar("T")
log = structlog.get_logger(__name__)


def call_with_retries(
    fn: Callable[[], T],
    *,
    model: str,
    key_env: str | None,
    retries: int,
    backoff_sec: float = PROVIDER_RETRY_BACKOFF_SEC,
) -> T:
    attempt = 0
    while True:
        try:
            return fn()
        except Exception as exc:  # SDK errors only reach here; our own bugs are re-raised below
            if not type(exc).__module__.startswith((*sdk_packages(), TRANSPORT)):
                raise
            err = classify(exc, model, key_env)
            if type(err) is not TransientProviderError or attempt >= retries:
                raise err from None
            delay = min(backoff_sec * 2**attempt, 8.0)
            log.warning("provider.retry", model=model, error_class=err.error_class, attempt=attempt + 1, delay=delay)
            time.sleep(delay)
            attempt += 1
