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
    err.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)  # never fold a path in two
    raise typer.Exit(e.exit_code)


@app.command()
def run(
    env_dir: Optional[Path] = typer.Argument(None, help="environment directory (Harbor task.toml, or "
                                             "Terminal-Bench task.yaml); not needed with --resume"),
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
    if env_dir is None and not resume:
        _fail(InputError("ENV_DIR", "missing: give an environment directory, or --resume RUN_ID"))
    if not resume:  # bad input fails fast, before the heavy imports and before any state is written
        from envqa.environment import load_environment

        try:
            load_environment(env_dir)
        except EnvQAError as e:
            _fail(e)
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
    image: bool = typer.Option(False, "--image", help="also build the image and check what it contains "
                               "(test literals, verifier code the agent can rewrite)"),
    strict: bool = typer.Option(False, "--strict", help="add the opt-in rules: root agent, unpinned base image"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Check an environment's files (and with --image its built image) without running any agent."""
    configure_logging()
    from envqa.environment import load_environment
    from envqa.probes.lint import lint_structure
    from envqa.probes.static import static_findings

    try:
        cfg = _config(config, {})
        env = load_environment(env_dir)
    except InputError as e:
        if as_json:
            sys.stdout.write(json.dumps({"ok": False, "error": str(e), "findings": []}) + "\n")
        _fail(e)
    s = cfg.probes
    findings = lint_structure(env) + static_findings(env, strict or s.lint_root_agent, strict or s.lint_unpinned_base)
    if image:
        from envqa.probes.image_checks import image_findings
        from envqa.runner import make_backend
        from envqa.sandbox.base import ImageBuildError

        backend = make_backend(cfg)
        try:
            tag, _built = backend.ensure_image(env)
            findings += image_findings(env, backend, tag, cfg)
        except ImageBuildError as e:
            from envqa.models import Finding, Label, Severity

            findings.append(Finding(rule="image-build-failed", label=Label.BRITTLENESS, severity=Severity.CRITICAL,
                                    message=f"the environment's image does not build: {e}", evidence=[e.log_tail],
                                    location=env.dockerfile.relative_to(env.root).as_posix()))
        except EnvQAError as e:
            _fail(e)
    serious = [f for f in findings if f.severity != "info"]
    if as_json:
        sys.stdout.write(json.dumps({"ok": not serious, "findings": [f.public() for f in findings]}) + "\n")
    else:
        from envqa.report import print_findings

        print_findings([f.public() for f in findings], Console(), title=f"lint {env.root}")
    raise typer.Exit(1 if serious else 0)


def _scheduler_settings(config: Optional[Path], limits: Optional[list[str]]):
    """Scheduler settings for worker/queues: QA_SCHEDULER_SETTINGS (embedded mode) or qa.toml, plus --limit."""
    import os

    from envqa.config import SchedulerSettings
    from envqa.scheduler.embedded import SETTINGS_ENV

    raw = os.environ.get(SETTINGS_ENV)
    settings = SchedulerSettings.model_validate_json(raw) if raw else _config(config, {}).scheduler
    for item in limits or []:
        name, _, n = item.rpartition("=")
        if not name or not n.isdigit() or int(n) < 1:
            raise InputError("--limit", f"expected QUEUE=N with N >= 1, got {item!r}")
        special = {"sandbox": settings.sandbox, "analysis": settings.analysis}.get(name.strip().lower())
        (special or settings.models.setdefault(name, type(settings.defaults)())).concurrency = int(n)
    return settings


def _redis_url(url: Optional[str], config: Optional[Path]) -> str:
    import os

    found = url or os.environ.get("REDIS_URL") or _config(config, {}).scheduler.redis_url
    if not found:
        raise InputError("REDIS_URL", "not set: pass --url or set REDIS_URL (embedded mode's Redis lives only "
                         "while its `qa run` runs)")
    return found


@app.command()
def worker(
    queues: str = typer.Option("*", "--queues", "-q", help="comma-separated queues (e.g. anthropic/claude-sonnet-4-5,sandbox); * = all"),
    url: Optional[str] = typer.Option(None, "--url", help="Redis URL (default $REDIS_URL)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    limit: Optional[list[str]] = typer.Option(None, "--limit", help="QUEUE=N concurrency across all workers (repeatable)"),
    burst: bool = typer.Option(False, "--burst", help="exit when no work is left"),
    name: Optional[str] = typer.Option(None, "--name", help="worker name (default: generated)"),
) -> None:
    """Run one worker: claim jobs from queues with a free slot, run them, apply the retry policy."""
    configure_logging()
    try:
        from envqa.scheduler.jobs import publish_settings
        from envqa.scheduler.queues import normalize_queue
        from envqa.scheduler.worker import ALL_QUEUES, run_worker

        settings = _scheduler_settings(config, limit)
        names = [q.strip() for q in queues.split(",") if q.strip()]
        try:
            names = [q if q == ALL_QUEUES else normalize_queue(q) for q in names]
        except ValueError as e:
            raise InputError("--queues", str(e)) from None
        from redis import Redis

        conn = Redis.from_url(_redis_url(url, config))
        flagged = [normalize_queue(q.rpartition("=")[0]) for q in limit or []]

        def publish_flags(w) -> None:  # a flag given here wins over what the enqueuer published
            for q in flagged:
                publish_settings(w.broker, settings, q)

        run_worker(conn, names, settings, burst=burst, name=name, on_start=publish_flags)
    except EnvQAError as e:
        _fail(e)
    except ValueError as e:
        _fail(InputError("--url", str(e)))


@app.command("queues")
def queues_cmd(
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    url: Optional[str] = typer.Option(None, "--url", help="Redis URL (default $REDIS_URL)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Depth, running, limit and parked-until of every queue."""
    configure_logging()
    try:
        from redis import Redis
        from redis.exceptions import ConnectionError as RedisConnectionError

        from envqa.scheduler.status import queue_status

        target = _redis_url(url, config)
        try:
            rows = queue_status(Redis.from_url(target, socket_connect_timeout=5))
        except RedisConnectionError as e:
            raise EnvQAError(f"cannot reach Redis at {target}: {e}") from None
        except ValueError as e:
            raise InputError("--url", str(e)) from None
    except EnvQAError as e:
        _fail(e)
    if as_json:
        sys.stdout.write(json.dumps({"queues": [r.model_dump(mode="json") for r in rows]}) + "\n")
        return
    from rich.table import Table

    table = Table("queue", "depth", "delayed", "running", "limit", "parked until", "reclaimed")
    for r in rows:
        table.add_row(r.queue, str(r.depth), str(r.delayed), str(r.running), str(r.limit or "-"),
                      r.parked_until.isoformat(timespec="seconds") if r.parked_until else "-", str(r.reclaimed))
    Console().print(table)


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
