"""Helpers every `qa` command module shares: reading the config with command-line overrides, failing with a
clear message (and, with --json, one JSON object), the options several commands spell the same way, and the
help-text escaping the finished app gets once (app/cli/__init__.py `main`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from envqa.core.config import QAConfig, load_config
from envqa.core.errors import EnvQAError

err = Console(stderr=True)

CONFIG_OPT = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)")
JSON_OPT = typer.Option(False, "--json", help="print one JSON object")


DEBUG_CRASH_ENV = "QA_DEBUG_CRASH"
"""Set (to anything) to make a command raise an unexpected error where it reads its config: the documented
test hook for the CLI's last boundary (app/cli/crash.py, exit 70; tests/fuzz_inputs/test_crash_boundary.py)."""


def _debug_crash() -> None:
    if os.environ.get(DEBUG_CRASH_ENV):
        raise RuntimeError(f"{DEBUG_CRASH_ENV} is set: a deliberate unexpected error")


def cli_config(config: Path | None, overrides: dict) -> QAConfig:
    _debug_crash()
    return load_config(config, {k: v for k, v in overrides.items() if v is not None})


def logged_config(config: Path | None) -> QAConfig:
    """The store-reading commands start with this: logs to stderr (stdout is for --json), then the config."""
    from envqa.core.logs import configure_logging

    configure_logging()
    _debug_crash()
    return load_config(config, {})


def print_json(obj: dict) -> None:
    """One JSON object, one line, on stdout (what a script reads)."""
    sys.stdout.write(json.dumps(obj) + "\n")


def fail(e: EnvQAError, as_json: bool = False) -> None:
    """Message on stderr; with --json also one JSON object with `error` on stdout (a script reads stdout)."""
    if as_json:
        sys.stdout.write(
            json.dumps(
                {
                    "error": str(e),
                    "exit_code": e.exit_code,
                    "path": None if getattr(e, "path", None) is None else str(e.path),  # type: ignore[attr-defined]
                    "field": getattr(e, "field", None),
                }
            )
            + "\n"
        )
    # escape: a message may quote a log ("[/work/...]" would read as markup)
    err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)  # never fold a path in two
    raise typer.Exit(e.exit_code)


def escape_help(app: typer.Typer) -> None:
    """Help strings are plain text: escape rich markup in every command's help and every option's, once.

    Typer renders help as rich markup, which ate "[analyst] model" (a config section name) down to " model".
    Called once on the finished app (app/cli/__init__.py main); idempotent (an OptionInfo shared by several
    commands, like --config, is escaped once).
    """
    import inspect

    from typer.models import ParameterInfo

    if getattr(app, "_envqa_escaped", False):
        return
    app._envqa_escaped = True  # type: ignore[attr-defined]
    seen: set[int] = set()
    if isinstance(app.info.help, str):
        app.info.help = escape(app.info.help)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            escape_help(group.typer_instance)
    for cmd in app.registered_commands:
        if cmd.help:
            cmd.help = escape(cmd.help)
        elif cmd.callback is not None and cmd.callback.__doc__:
            cmd.help = escape(inspect.getdoc(cmd.callback) or "")
        if cmd.callback is None:
            continue
        for param in inspect.signature(cmd.callback).parameters.values():
            info = param.default
            if isinstance(info, ParameterInfo) and info.help and id(info) not in seen:
                seen.add(id(info))
                info.help = escape(info.help)
