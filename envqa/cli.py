"""The `qa` command. Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 run could not finish."""

from __future__ import annotations

import json
import sqlite3
import sys
import uuid
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from envqa.config import QAConfig, load_config
from envqa.errors import EnvQAError, InputError
from envqa.logs import configure_logging

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Quality-check RL coding environments: run, probe, label, revise.")
err = Console(stderr=True)
EXIT = {"clean": 0, "findings": 1, "incomplete": 3}


def _config(config: Optional[Path], overrides: dict) -> QAConfig:
    return load_config(config, {k: v for k, v in overrides.items() if v is not None})


def _fail(e: EnvQAError) -> None:
    err.print(f"[bold red]error:[/] {e}", highlight=False)
    raise typer.Exit(e.exit_code)


@app.command()
def run(
    env_dir: Path = typer.Argument(..., help="environment directory (Harbor task.toml, or Terminal-Bench task.yaml)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object (the report) on stdout"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    oracle_runs: Optional[int] = typer.Option(None, "--oracle-runs", min=1, help="oracle trials (default 3)"),
    nop_runs: Optional[int] = typer.Option(None, "--nop-runs", min=1, help="nop trials (default 1)"),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="solver model, e.g. anthropic/claude-sonnet-4-5 (repeatable)"),
    trials: Optional[int] = typer.Option(None, "--trials", "-n", min=1, help="solver trials per model"),
    run_id: Optional[str] = typer.Option(None, "--run-id", help="id for this run (default: generated)"),
    resume: Optional[str] = typer.Option(None, "--resume", help="resume an interrupted run by its id"),
) -> None:
    """Build the environment, run oracle and nop trials, report what that says about it."""
    configure_logging()
    from envqa.runner import execute_run  # heavy imports (docker, langgraph) only when running

    try:
        cfg = _config(config, {"validate.oracle_runs": oracle_runs, "validate.nop_runs": nop_runs,
                               "sweep.models": model or None, "sweep.trials": trials})
        rid = resume or run_id or f"run-{uuid.uuid4().hex[:10]}"
        report = execute_run(env_dir, cfg, rid, resume=bool(resume), quiet=as_json, console=err)
    except EnvQAError as e:
        _fail(e)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: containers removed; resume with[/] qa run --resume " + rid)
        raise typer.Exit(130)
    if as_json:
        sys.stdout.write(json.dumps(report) + "\n")
    else:
        from envqa.report import print_report

        print_report(report, Console())
    raise typer.Exit(EXIT[report["verdict"]])


@app.command()
def lint(
    env_dir: Path = typer.Argument(..., help="environment directory"),
    as_json: bool = typer.Option(False, "--json", help="print findings as JSON"),
) -> None:
    """Check an environment's structure without building or running anything."""
    configure_logging()
    from envqa.environment import load_environment
    from envqa.probes.lint import lint_structure

    try:
        env = load_environment(env_dir)
    except InputError as e:
        if as_json:
            sys.stdout.write(json.dumps({"ok": False, "error": str(e), "findings": []}) + "\n")
        _fail(e)
    findings = lint_structure(env)
    if as_json:
        sys.stdout.write(json.dumps({"ok": not findings, "findings": [f.public() for f in findings]}) + "\n")
    else:
        from envqa.report import print_findings

        print_findings([f.public() for f in findings], Console(), title=f"lint {env.root}")
    raise typer.Exit(1 if findings else 0)


def main() -> None:
    try:
        app()
    except sqlite3.OperationalError as e:  # e.g. the state directory is read-only
        err.print(f"[bold red]error:[/] state database: {e}")
        sys.exit(3)
    except Exception:  # a bug of ours: show it, but never exit 1 (that means "findings")
        err.print_exception()
        sys.exit(3)


if __name__ == "__main__":
    main()
