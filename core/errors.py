"""Typed failures, each mapped to one CLI exit code.

The CLI never inspects messages: it maps the exception class to the exit code the README documents
(2 usage/input, 3 infrastructure, 70 a bug of ours). Cancellation is a BaseException so nothing swallows it. Every
`error_class` these carry is registered in core/registry/error_classes.py (transient, infra, pass rate).
"""

from __future__ import annotations

UNEXPECTED_EXIT_CODE = 70
"""The exit code of a failure nobody foresaw, a bug of ours (EX_SOFTWARE): app/cli/crash.py. Distinct from 3,
which keeps meaning that the run could not finish for reasons outside the task (infrastructure, inconclusive)."""


class EnvQAError(Exception):
    """Base of every error envqa raises on purpose."""

    exit_code = 3


class InputError(EnvQAError):
    """The user's input is wrong: a malformed environment, config file or flag.

    `path` names the file, `field` the key inside it (when there is one), so every message can say
    exactly where to look.
    """

    exit_code = 2

    def __init__(self, path: str, problem: str, field: str | None = None):
        self.path, self.problem, self.field = str(path), problem, field
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {problem}")


class PatchError(InputError):
    """A patch that does not apply, or touches a path outside the task's files: refused, nothing written."""

    def __init__(self, path: str, problem: str):
        super().__init__(path, problem)


class InfraError(EnvQAError):
    """The machinery failed (Docker, Redis, a provider): not the environment's fault, never a fail."""

    exit_code = 3

    def __init__(self, message: str, error_class: str = "infra"):
        self.error_class = error_class
        super().__init__(message)


class RunCancelled(BaseException):
    """Ctrl-C or a shutdown request; a BaseException so that `except Exception` cannot eat it."""


class ProviderError(InfraError):
    """A model provider failed. `transient` says whether retrying can help (the scheduler's policy)."""

    transient = True

    def __init__(self, message: str, error_class: str = "provider_error", model: str | None = None):
        self.model = model
        super().__init__(message, error_class)


class MalformedOutput(ProviderError):
    """The model kept answering with something the pydantic schema rejects, after every retry."""

    transient = False

    def __init__(self, message: str, model: str | None = None, raw: str = ""):
        self.raw = raw
        super().__init__(message, "malformed_output", model)


class RateLimited(ProviderError):
    """429 / rate limit: park the model's queue until `retry_after` seconds from now; spend no attempt."""

    def __init__(self, message: str, retry_after: float | None = None, model: str | None = None):
        self.retry_after = retry_after
        super().__init__(message, "rate_limited", model)


class ProviderOverloaded(ProviderError):
    """529 / overloaded: like a rate limit, but without a server-given time."""

    def __init__(self, message: str, retry_after: float | None = None, model: str | None = None):
        self.retry_after = retry_after
        super().__init__(message, "overloaded", model)


class TransientProviderError(ProviderError):
    """5xx, connection reset, timeout: retry with backoff."""


class ProviderAuthError(ProviderError):
    """Bad or missing key: permanent; the message names the environment variable to set."""

    transient = False
    exit_code = 2


class ContextTooLong(ProviderError):
    """The conversation no longer fits the model's context: permanent for this trial."""

    transient = False


class InvalidRequest(ProviderError):
    """The provider rejected the request itself (400): permanent."""

    transient = False
