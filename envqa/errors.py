"""Typed failures, each mapped to one CLI exit code.

The CLI never inspects messages: it maps the exception class to the exit code the README documents
(2 usage/input, 3 infrastructure). Cancellation is a BaseException so nothing swallows it.
"""

from __future__ import annotations


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


class InfraError(EnvQAError):
    """The machinery failed (Docker, Redis, a provider): not the environment's fault, never a fail."""

    exit_code = 3

    def __init__(self, message: str, error_class: str = "infra"):
        self.error_class = error_class
        super().__init__(message)


class RunCancelled(BaseException):
    """Ctrl-C or a shutdown request; a BaseException so that `except Exception` cannot eat it."""
