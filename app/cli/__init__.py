"""The `qa` command: one Typer app, one module per command group (each command a module-level function).

Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 run could not finish, 70 an unexpected error (a bug
of ours: app/cli/crash.py).

The commands are registered here, in one list, in the order `qa --help` shows them; each module imports only
what its command needs at start (the heavy parts, docker and langgraph, load when a command runs).
"""

from __future__ import annotations

import sqlite3
import sys

import typer

from envqa.app.cli import analyze, decide, generate, lint, rules, run, runs, serve, versions, workers
from envqa.app.cli.common import err, escape_help
from envqa.app.cli.crash import report_error, report_unexpected
from envqa.core.errors import EnvQAError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Quality-check RL coding environments: run, probe, label, revise.",
)

COMMANDS = (  # (name, function), in `qa --help` order
    ("run", run.run),
    ("lint", lint.lint),
    ("worker", workers.worker),
    ("queues", workers.queues),
    ("serve", serve.serve),
    ("report", serve.report),
    ("approve", decide.approve),
    ("reject", decide.reject),
    ("runs", runs.runs),
    ("show", runs.show),
    ("status", runs.status),
    ("new", generate.new),
    ("generate", generate.generate),
    ("rules", rules.rules),
    ("analyze", analyze.analyze),
    ("diff", versions.diff),
    ("export", versions.export),
)
for _name, _command in COMMANDS:
    app.command(_name)(_command)


@app.callback()
def _root(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="on an unexpected error (exit 70), print its traceback too"
    ),
) -> None:
    """Quality-check RL coding environments: run, probe, label, revise."""
    # main() reads -v from argv: an unexpected error may come before or after this runs


def main() -> None:
    escape_help(app)  # help text is plain: "[analyst] model" must not read as markup
    argv = sys.argv[1:]
    try:
        app()
    except sqlite3.OperationalError as e:  # e.g. the state directory is read-only
        err.print(f"[bold red]error:[/] state database: {e}")
        sys.exit(3)
    except EnvQAError as e:  # ours, on purpose, but no command caught it: its message and its exit code
        sys.exit(report_error(argv, e))
    except Exception as e:  # noqa: BLE001 - a bug of ours: one line, a log file, exit 70 (never 1 nor 3)
        sys.exit(report_unexpected(argv, e))
