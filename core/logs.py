"""structlog set-up: JSON lines when stderr is not a terminal, readable lines when it is."""

from __future__ import annotations

import logging
import os
import sys

import structlog


class StderrLogger:
    """Prints to the `sys.stderr` of the moment, not the one at set-up.

    A command run in-process (tests, a notebook) may set up logging while stderr is a captured stream that is
    closed afterwards; a logger bound to that object turned every later warning into "I/O operation on closed
    file" inside whatever code happened to log."""

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def _stderr_logger(*_args: object) -> StderrLogger:
    return StderrLogger()


def configure_logging(level: str | None = None) -> None:
    level_name = (level or os.environ.get("QA_LOG_LEVEL", "warning")).upper()
    renderer = structlog.dev.ConsoleRenderer() if sys.stderr.isatty() else structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level_name, logging.WARNING)),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )
