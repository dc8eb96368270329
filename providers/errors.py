"""Map SDK exceptions (anthropic and openai alike) onto envqa's typed provider errors.

The scheduler acts on the class, not the message: RateLimited parks the model's queue for
`retry_after` seconds, ProviderOverloaded backs off, TransientProviderError retries, and the permanent
ones (auth, context too long, invalid request) fail the trial or the run. Messages never carry the key.
"""

from __future__ import annotations

import sys

from envqa.core.errors import (
    ContextTooLong,
    InvalidRequest,
    ProviderAuthError,
    ProviderError,
    ProviderOverloaded,
    RateLimited,
    TransientProviderError,
)
from envqa.providers.registry import sdk_packages

_CONTEXT_MARKERS = (
    "prompt is too long",
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "too many tokens",
    "context size",
)  # llama.cpp: "the request exceeds the available context size" (HTTP 400)


def retry_after_seconds(headers) -> float | None:
    """Retry-After as seconds (the HTTP-date form is rare from model APIs and treated as unknown)."""
    if headers is None:
        return None
    for name in ("retry-after-ms", "retry-after"):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value)
        except ValueError:
            continue
        return seconds / 1000.0 if name.endswith("-ms") else seconds
    return None


def classify(exc: Exception, model: str, key_env: str | None) -> ProviderError:
    """One SDK exception -> the envqa error that says what to do about it. No SDK is imported here: a process
    that has an SDK exception in hand has already imported that SDK, and importing the other one on a first
    error cost a worker ~0.6 s of CPU on the path from a 429 to parking its queue (benchmarks/scheduler.py)."""
    status_error = _sdk_classes("APIStatusError")
    if isinstance(exc, _sdk_classes("APITimeoutError")):
        return TransientProviderError(f"{model}: request timed out", "provider_timeout", model)
    if isinstance(exc, _sdk_classes("APIConnectionError")):
        return TransientProviderError(
            f"{model}: cannot reach the provider ({type(exc).__name__})", "provider_unreachable", model
        )
    if not isinstance(exc, status_error):
        return TransientProviderError(f"{model}: {type(exc).__name__}: {exc}", "provider_error", model)
    status = exc.status_code
    detail = _detail(exc)
    if status in (401, 403):
        where = f"the key in {key_env}" if key_env else "the request"
        return ProviderAuthError(
            f"{model}: the provider rejected {where} (HTTP {status}: {detail}); "
            f"set a valid key in {key_env or 'the provider config'}",
            "auth",
            model,
        )
    if status == 429:
        wait = retry_after_seconds(exc.response.headers)
        return RateLimited(
            f"{model}: rate limited (HTTP 429), retry after {f'{wait:g}' if wait is not None else '?'}s", wait, model
        )
    if status == 529 or "overloaded" in detail.lower():
        return ProviderOverloaded(
            f"{model}: provider overloaded (HTTP {status})", retry_after_seconds(exc.response.headers), model
        )
    if status in (400, 413, 422) and any(m in detail.lower() for m in _CONTEXT_MARKERS):
        return ContextTooLong(f"{model}: context too long: {detail}", "context_too_long", model)
    if status == 413:
        return ContextTooLong(f"{model}: request too large: {detail}", "context_too_long", model)
    if 400 <= status < 500 and status not in (408, 409):
        return InvalidRequest(f"{model}: request rejected (HTTP {status}): {detail}", "invalid_request", model)
    return TransientProviderError(f"{model}: provider error (HTTP {status}): {detail}", "provider_5xx", model)


def _sdk_classes(name: str) -> tuple[type, ...]:
    """The exception class `name` of each registered provider's SDK that this process has loaded: only a loaded
    SDK can have raised one."""
    return tuple(getattr(sys.modules[sdk], name) for sdk in sdk_packages() if sdk in sys.modules)


def _detail(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("type") or err)
            code = err.get("code")
            return f"{text} ({code})" if code else text
    return str(getattr(exc, "message", exc))[:300]
