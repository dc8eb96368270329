"""`qa serve` (Slack's interactivity endpoint and the HTML reports) and `qa report` (one run's HTML report)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from envqa.app.cli.common import cli_config, err, fail
from envqa.core.errors import EnvQAError, InputError
from envqa.core.logs import configure_logging


def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="port to listen on"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON line (url, routes, warnings) on start"),
) -> None:
    """Serve Slack's interactivity endpoint (POST /slack/interactivity) and the HTML reports."""
    configure_logging()
    try:
        cfg = cli_config(config, {})
    except EnvQAError as e:
        fail(e)
    from envqa.app.serve import serve as run_server
    from envqa.app.serve import startup_info

    info = startup_info(cfg, host, port)
    if as_json:
        sys.stdout.write(json.dumps(info) + "\n")
        sys.stdout.flush()
    else:
        err.print(
            f"qa serve on {info['url']}  (Slack interactivity: {info['url']}/slack/interactivity)",
            highlight=False,
            soft_wrap=True,
        )
    for warning in info["warnings"]:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)
    run_server(cfg, host, port)


def report(
    run_id: str = typer.Argument(..., help="the run whose report to build"),
    html: Path | None = typer.Option(None, "--html", help="write the HTML here (default runs/<run_id>/report.html)"),
    open_it: bool = typer.Option(False, "--open", help="open the report in a browser"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object: run_id, html path, bytes"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Build a run's self-contained HTML report from its stored report and trial artifacts."""
    configure_logging()
    from envqa.app.report_html import write_html_report

    try:
        path = write_html_report(cli_config(config, {}), run_id, html)
    except EnvQAError as e:
        fail(e)
    except OSError as e:
        fail(InputError(str(html or run_id), f"cannot write the report: {e.strerror or e}"))
    if as_json:
        sys.stdout.write(json.dumps({"run_id": run_id, "html": str(path), "bytes": path.stat().st_size}) + "\n")
    else:
        Console(soft_wrap=True).print(f"report: {path}", highlight=False)
    if open_it:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())
