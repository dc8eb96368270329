"""slack_sdk's WebClient with retries that respect a time budget.

slack_sdk's own RateLimitErrorRetryHandler sleeps whatever Retry-After says, and ServerErrorRetryHandler
retries only 500 and 503 once. Here each message gets a deadline (`[slack] send_budget_sec`): a 429 is
retried after its Retry-After and 5xx/connection errors with exponential backoff, but only while the
next attempt can still start before the deadline. So Slack being down costs a bounded time and ends as
a recorded failure, never as a hung run.

The token and signing secret come from the environment only; they are read here and nowhere else.
"""

from __future__ import annotations

import os
import random
import time

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import RetryHandler
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.webhook import WebhookClient

from envqa.core.config import SlackSettings
from envqa.core.defaults import SLACK_MAX_RETRIES as MAX_RETRIES
from envqa.core.defaults import SLACK_RETRY_BACKOFF, WEBHOOK_BUDGET_SEC

TOKEN_ENV = "SLACK_BOT_TOKEN"
SECRET_ENV = "SLACK_SIGNING_SECRET"


class SlackUnavailable(Exception):
    """Slack could not be reached or refused the call within the budget (the message says why)."""


def bot_token() -> str:
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token:
        raise SlackUnavailable(f"{TOKEN_ENV} is not set")
    return token


def signing_secret() -> str | None:
    return os.environ.get(SECRET_ENV, "").strip() or None


def scrub(text: str) -> str:
    """Blank out the token and the signing secret wherever an error message might have echoed them."""
    for env in (TOKEN_ENV, SECRET_ENV):
        value = os.environ.get(env, "").strip()
        if len(value) >= 4:
            text = text.replace(value, "***")
    return text


def describe(e: Exception) -> str:
    """A short, secret-free account of a failed call: `HTTP 503 fatal_error (chat.postMessage)`."""
    response = getattr(e, "response", None)
    if isinstance(e, SlackApiError) and response is not None:
        method = str(getattr(response, "api_url", "")).rstrip("/").rsplit("/", 1)[-1]
        error = response.get("error") if isinstance(response.data, dict) else None
        return scrub(f"HTTP {response.status_code} {error or 'error'} ({method})")
    return scrub(f"{type(e).__name__}: {e}")


class Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()


def _retry_after(response: HttpResponse) -> float:
    for key, values in response.headers.items():
        if key.lower() == "retry-after" and values:
            try:
                return max(0.0, float(values[0]))
            except ValueError:
                break
    return 1.0


class BudgetedRateLimitHandler(RetryHandler):
    """429: wait Retry-After (plus a little jitter) and retry, unless that wait would pass the deadline."""

    def __init__(self, deadline: Deadline, max_retry_count: int = MAX_RETRIES):
        super().__init__(max_retry_count=max_retry_count)
        self.deadline = deadline

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return (
            response is not None and response.status_code == 429 and _retry_after(response) < self.deadline.remaining()
        )

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        state.next_attempt_requested = True
        wait = _retry_after(response) + random.uniform(0, 0.2)  # type: ignore[arg-type]
        time.sleep(max(0.0, min(wait, self.deadline.remaining())))
        state.increment_current_attempt()


class BudgetedServerErrorHandler(RetryHandler):
    """Any 5xx: back off exponentially (0.5 s, 1 s, 2 s, ...) while the deadline allows."""

    def __init__(self, deadline: Deadline, max_retry_count: int = MAX_RETRIES):
        super().__init__(
            max_retry_count=max_retry_count,
            interval_calculator=BackoffRetryIntervalCalculator(backoff_factor=SLACK_RETRY_BACKOFF),
        )
        self.deadline = deadline

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code < 500:
            return False
        return self.interval_calculator.calculate_sleep_duration(state.current_attempt) < self.deadline.remaining()


class BudgetedConnectionErrorHandler(ConnectionErrorRetryHandler):
    def __init__(self, deadline: Deadline, max_retry_count: int = MAX_RETRIES):
        super().__init__(
            max_retry_count=max_retry_count,
            interval_calculator=BackoffRetryIntervalCalculator(backoff_factor=SLACK_RETRY_BACKOFF),
        )
        self.deadline = deadline

    def _can_retry(self, **kwargs) -> bool:
        state = kwargs["state"]
        return (
            super()._can_retry(**kwargs)
            and self.interval_calculator.calculate_sleep_duration(state.current_attempt) < self.deadline.remaining()
        )


def _handlers(deadline: Deadline) -> list[RetryHandler]:
    return [
        BudgetedRateLimitHandler(deadline),
        BudgetedServerErrorHandler(deadline),
        BudgetedConnectionErrorHandler(deadline),
    ]


def web_client(settings: SlackSettings, budget_sec: float | None = None) -> WebClient:
    """A WebClient for one message (its retry handlers share that message's deadline)."""
    budget = budget_sec if budget_sec is not None else settings.send_budget_sec
    deadline = Deadline(budget)
    return WebClient(
        token=bot_token(),
        base_url=settings.api_base_url,
        timeout=max(1, int(min(10.0, budget))),
        retry_handlers=_handlers(deadline),
    )


def webhook_client(url: str, budget_sec: float = WEBHOOK_BUDGET_SEC) -> WebhookClient:
    """For `response_url` (ephemeral answers to a click): same retry policy, no token needed."""
    return WebhookClient(
        url, timeout=max(1, int(min(WEBHOOK_BUDGET_SEC, budget_sec))), retry_handlers=_handlers(Deadline(budget_sec))
    )
