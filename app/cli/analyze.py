"""`qa analyze PATH... [--tasks DATASET]`: triage the trials of Harbor jobs and `tb run` folders, no Docker (issue 33).

Exit codes as a dataset run: 0 every task clean and in band, 1 findings or out of band, 3 nothing measured,
2 bad input (no readable trial at all). A file that cannot be read is named and the rest goes on.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from envqa.app.cli.common import cli_config, err, fail
from envqa.core.errors import EnvQAError, InputError

FORMATS = ("text", "json", "markdown", "github")


def analyze(
    paths: list[Path] = typer.Argument(
        ..., metavar="PATH", help="Harbor job or trial folders, folders of jobs, or `tb run` output folders"
    ),
    tasks: list[Path] | None = typer.Option(
        None,
        "--tasks",
        help="the dataset (a folder of task folders, or "
        "task folders) the trials ran on: match by name, compare Harbor's "
        "task checksum, read the instructions (repeatable)",
    ),
    count_stale: bool = typer.Option(
        False,
        "--count-stale",
        help="count trials that ran another version of the task (their checksum differs from --tasks)",
    ),
    no_store: bool = typer.Option(False, "--no-store", help="with --tasks: do not record the trials in the store"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object on stdout"),
    fmt: str | None = typer.Option(None, "--format", help="text | json | markdown | github"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (the band)"),
    html: Path | None = typer.Option(None, "--html", help="also write the triage as one HTML page here"),
) -> None:
    """Triage Harbor jobs and tb runs across trials: pass@1 per agent/model against the band, and findings."""
    from envqa.core.logs import configure_logging

    configure_logging()
    fmt = "json" if as_json else (fmt or "text")
    if fmt not in FORMATS:
        fail(InputError("--format", f"{fmt!r}: expected one of {', '.join(FORMATS)}"), as_json)
    for t in tasks or []:
        if not t.is_dir():
            fail(InputError(str(t), "--tasks: not a folder"), fmt == "json")
    from envqa.app.analyze import analyze as triage
    from envqa.app.analyze_output import github, markdown, print_text

    try:
        cfg = cli_config(config, {})
        with _progress(quiet=fmt != "text") as on_trial:
            doc = triage(paths, cfg, tasks=tasks, count_stale=count_stale, store=not no_store, on_trial=on_trial)
    except EnvQAError as e:
        fail(e, fmt == "json")
    if html is not None:
        from envqa.app.report_html.analyze import write_analyze_html

        write_analyze_html(doc, html)
    if fmt == "json":
        sys.stdout.write(json.dumps(doc) + "\n")
    elif fmt == "markdown":
        sys.stdout.write(markdown(doc))
    elif fmt == "github":
        sys.stdout.write(github(doc))
    else:
        print_text(doc, Console())
    if not doc["tasks"] and doc["problems"]:
        err.print("[bold red]error:[/] no trial could be read")
    raise typer.Exit(doc["exit_code"])


class _progress:
    """A live count of trials read, on stderr (a long import shows it is moving); nothing when quiet."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bar: Progress | None = None

    def __enter__(self):
        if self.quiet:
            return lambda n: None
        if not err.is_terminal:  # a log: a line per thousand trials
            return lambda n: err.print(f"read {n} trials") if n % 1000 == 0 else None
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("reading trials: {task.completed}"),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )
        self.bar.__enter__()
        task = self.bar.add_task("read", total=None)
        return lambda n: self.bar.update(task, completed=n) if n % 50 == 0 or n < 50 else None

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
