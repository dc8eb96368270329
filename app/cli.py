"""The `qa` command. Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 run could not finish."""

from __future__ import annotations

import json
import sqlite3
import sys
import uuid
from pathlib import Path

import typer
from rich.console import Console

from envqa.app.cli_common import cli_config, err, escape_help, fail
from envqa.core.errors import EnvQAError, InputError
from envqa.core.logs import configure_logging
from envqa.core.verdicts import exit_code

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Quality-check RL coding environments: run, probe, label, revise.",
)


@app.command()
def run(
    env_dirs: list[Path] | None = typer.Argument(
        None,
        metavar="PATH",
        help="a task directory (Harbor "
        "task.toml, or Terminal-Bench task.yaml), or a dataset: a folder "
        "of task folders (several PATHs: one dataset); not needed with "
        "--resume",
        show_default=False,
    ),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object (the report) on stdout"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    oracle_runs: int | None = typer.Option(
        None, "--oracle-runs", min=1, help="oracle runs of every stage (default 3; a stage's qa.toml key wins)"
    ),
    nop_runs: int | None = typer.Option(None, "--nop-runs", min=1, help="nop trials (default 1)"),
    model: list[str] | None = typer.Option(
        None, "--model", "-m", help="solver model, e.g. anthropic/claude-sonnet-4-5 (repeatable)"
    ),
    trials: int | None = typer.Option(None, "--trials", "-n", min=1, help="solver trials per model"),
    actions: str | None = typer.Option(
        None,
        "--actions",
        help="tools | text: how solver models act (default "
        "tools; text = one fenced bash block per reply; [solver] actions)",
    ),
    analyst_model: str | None = typer.Option(
        None, "--analyst-model", help="model that labels solver trials the rules leave open ([analyst] model)"
    ),
    hunter_model: str | None = typer.Option(
        None, "--hunter-model", help="model of the LLM shortcut hunter ([hunter] model; [hunter] trials per version)"
    ),
    reviser_model: str | None = typer.Option(
        None, "--reviser-model", help="model that writes the revisions the mechanical fixers cannot ([reviser] model)"
    ),
    generator_model: str | None = typer.Option(
        None, "--generator-model", help="model that writes the task when ENV_DIR holds only spec.md ([generator] model)"
    ),
    run_id: str | None = typer.Option(None, "--run-id", help="id for this run (default: generated)"),
    resume: str | None = typer.Option(
        None, "--resume", help="resume an interrupted run (RUN_ID) or dataset run (ds-...) by its id"
    ),
    task: list[str] | None = typer.Option(
        None, "--task", "-t", help="dataset: run only the tasks whose name matches this glob (repeatable)"
    ),
    exclude: list[str] | None = typer.Option(
        None, "--exclude", "-x", help="dataset: skip the tasks whose name matches this glob (repeatable)"
    ),
    max_tasks: int | None = typer.Option(
        None, "--max-tasks", min=1, help="dataset: run at most N tasks (the first N by name, after the filters)"
    ),
    jobs: int | None = typer.Option(
        None,
        "--jobs",
        "-j",
        min=1,
        help="dataset: tasks in flight at once (default: 2 per core, at most one per 1.5 GB of free memory)",
    ),
    fmt: str | None = typer.Option(
        None,
        "--format",
        help="text | json | markdown | github: what is printed on "
        "stdout (json = --json; markdown: a pull-request comment; github: that plus "
        "workflow annotations)",
    ),
    approval: str | None = typer.Option(
        None,
        "--approval",
        help="prompt | wait | auto: how a gated revision "
        "is approved (default: prompt on a terminal, else wait = exit 4)",
    ),
    detach: bool = typer.Option(
        False,
        "--detach",
        help="with REDIS_URL: enqueue the run on the `control` "
        "queue for `qa worker` processes, print its id and return",
    ),
    stall_timeout: float | None = typer.Option(
        None,
        "--stall-timeout",
        min=0,
        help="Redis mode: exit 3 when a "
        "queue holds work this many seconds with no live worker "
        "(default 600; 0 waits forever)",
    ),
    verbose: bool = typer.Option(
        False,
        "--verbose",
        "-v",
        help="at the end, every trial and the coverage table (default: a one-line coverage summary)",
    ),
    trials_from: list[Path] | None = typer.Option(
        None,
        "--trials-from",
        help="Harbor job or `tb run` folders "
        "whose trials of this task join the sweep (nothing is re-run; "
        "repeatable; [sweep] trials_from)",
    ),
    count_stale: bool = typer.Option(
        False,
        "--count-stale",
        help="with --trials-from: count trials that ran another version of the task (their recorded checksum differs)",
    ),
) -> None:
    """Build the environment, run oracle and nop trials, report what that says about it."""
    configure_logging()
    overrides = {
        "oracle_runs": oracle_runs,
        "validate.nop_runs": nop_runs,
        "sweep.models": model or None,
        "sweep.trials": trials,
        "solver.actions": actions,
        "analyst.model": analyst_model,
        "hunter.model": hunter_model,
        "reviser.model": reviser_model,
        "generator.model": generator_model,
        "scheduler.stall_timeout_sec": stall_timeout,
        "sweep.trials_from": [str(p.resolve()) for p in trials_from] if trials_from else None,
        "sweep.count_stale": count_stale or None,
    }
    from envqa.app.dataset_cli import check_format, run_dataset_command, wants_dataset  # issue 25: qa run PATH...

    try:
        fmt = check_format(fmt, as_json)
    except EnvQAError as e:
        fail(e, as_json)
    as_json = fmt == "json"
    for p in trials_from or []:  # issue 33: bad input fails before any work
        if not p.is_dir():
            fail(
                InputError(str(p), "--trials-from: not a folder (a Harbor job or trial folder, or a tb run folder)"),
                as_json,
            )
    if wants_dataset(env_dirs or [], resume, task, exclude, max_tasks, jobs, fmt):
        run_dataset_command(
            env_dirs or [],
            lambda: cli_config(config, overrides),
            resume=resume,
            include=task,
            exclude=exclude,
            max_tasks=max_tasks,
            jobs=jobs,
            fmt=fmt,
            approval=approval,
            detach=detach,
        )
    env_dir = env_dirs[0] if env_dirs else None
    if env_dir is None and not resume:
        fail(InputError("ENV_DIR", "missing: give an environment directory, or --resume RUN_ID"), as_json)
    warnings: list[dict] = []  # unknown task.toml keys (issue 23): shown before the run, never an exit 2
    if not resume:  # bad input fails fast, before the heavy imports and before any state is written
        from envqa.agents.generator import is_spec_dir
        from envqa.core.environment import load_environment

        try:
            if not is_spec_dir(env_dir):  # spec.md only: the generate node writes the task (issue 13)
                warnings = [w.public() for w in load_environment(env_dir).warnings]
        except EnvQAError as e:
            fail(e, as_json)
        from rich.markup import escape

        for w in warnings:  # escaped: a table name such as [verifier] is not markup
            err.print(f"[yellow]warning:[/] {escape(w['message'])}", highlight=False, soft_wrap=True)
    from envqa.app.runner import execute_run  # heavy imports (docker, langgraph) only when running

    try:
        cfg = cli_config(config, overrides)
        rid = resume or run_id or f"run-{uuid.uuid4().hex[:10]}"
        from envqa.app.cli_runs import approval_mode, detach_run

        mode, ask = approval_mode(approval, cfg, err)
        if detach:
            detach_run(env_dir, cfg, rid, resume=bool(resume), mode=mode, as_json=as_json)
            return
        report = execute_run(
            env_dir, cfg, rid, resume=bool(resume), quiet=as_json, console=err, approval_mode=mode, ask=ask
        )
    except EnvQAError as e:
        fail(e, as_json)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: containers removed; resume with[/] qa run --resume " + rid)
        raise typer.Exit(130) from None
    if as_json:
        sys.stdout.write(json.dumps({**report, "warnings": warnings}) + "\n")
    else:
        from envqa.app.report import print_report

        if report.get("generation"):  # issue 13: spec.md -> task; every attempt (the only table when none passed)
            from envqa.app.cli_generate import print_generation

            print_generation(report["generation"], Console())
        if report.get("version") or (report.get("environment") or {}).get("version"):
            print_report(report, Console(), verbose=verbose)  # the story in order, the pending proposal included
    raise typer.Exit(exit_code(report["verdict"]))


@app.command()
def lint(
    env_dir: Path = typer.Argument(..., help="environment directory"),
    as_json: bool = typer.Option(False, "--json", help="print findings as JSON"),
    image: bool = typer.Option(
        False,
        "--image",
        help="also build the image and check what it contains (test literals, verifier code the agent can rewrite)",
    ),
    strict: bool = typer.Option(False, "--strict", help="add the opt-in rules: root agent, unpinned base image"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Check an environment's files (and with --image its built image) without running any agent."""
    configure_logging()
    from envqa.core.environment import load_environment
    from envqa.probes.task_schema import lint_findings

    try:
        cfg = cli_config(config, {})
        env = load_environment(env_dir, lint=True)  # lints what qa cannot run yet, and an empty instruction
    except InputError as e:
        if as_json:
            sys.stdout.write(
                json.dumps({"ok": False, "error": str(e), "exit_code": e.exit_code, "findings": []}) + "\n"
            )
        fail(e)
    s = cfg.probes
    findings = lint_findings(env, strict or s.lint_root_agent, strict or s.lint_unpinned_base)
    if image:
        from envqa.app.runner import make_backend
        from envqa.core.sandbox import ImageBuildError
        from envqa.probes.image_checks import image_findings

        backend = make_backend(cfg)
        try:
            tag, _built = backend.ensure_image(env)
            findings += image_findings(env, backend, tag, cfg)
        except ImageBuildError as e:
            from envqa.core.models import Finding, Label, Severity

            findings.append(
                Finding(
                    rule="image-build-failed",
                    label=Label.BRITTLENESS,
                    severity=Severity.CRITICAL,
                    message=f"the environment's image does not build: {e}",
                    evidence=[e.log_tail],
                    location=env.dockerfile.relative_to(env.root).as_posix(),
                )
            )
        except EnvQAError as e:
            fail(e, as_json)
    serious = [f for f in findings if f.severity != "info"]
    if as_json:
        sys.stdout.write(json.dumps({"ok": not serious, "findings": [f.public() for f in findings]}) + "\n")
    else:
        from envqa.app.report import print_findings

        print_findings([f.public() for f in findings], Console(), title=f"lint {env.root}")
    raise typer.Exit(1 if serious else 0)


def _scheduler_settings(config: Path | None, limits: list[str] | None):
    """Scheduler settings for worker/queues: QA_SCHEDULER_SETTINGS (embedded mode) or qa.toml, plus --limit."""
    import os

    from envqa.core.config import SchedulerSettings
    from envqa.scheduler.embedded import SETTINGS_ENV

    raw = os.environ.get(SETTINGS_ENV)
    settings = SchedulerSettings.model_validate_json(raw) if raw else cli_config(config, {}).scheduler
    for item in limits or []:
        name, _, n = item.rpartition("=")
        if not name or not n.isdigit() or int(n) < 1:
            raise InputError("--limit", f"expected QUEUE=N with N >= 1, got {item!r}")
        special = {"sandbox": settings.sandbox, "analysis": settings.analysis}.get(name.strip().lower())
        (special or settings.models.setdefault(name, type(settings.defaults)())).concurrency = int(n)
    return settings


def _redis_url(url: str | None, config: Path | None) -> str:
    import os

    found = url or os.environ.get("REDIS_URL") or cli_config(config, {}).scheduler.redis_url
    if not found:
        raise InputError(
            "REDIS_URL",
            "not set: pass --url or set REDIS_URL (embedded mode's Redis lives only while its `qa run` runs)",
        )
    return found


@app.command()
def worker(
    queues: str = typer.Option(
        "*", "--queues", "-q", help="comma-separated queues (e.g. anthropic/claude-sonnet-4-5,sandbox); * = all"
    ),
    url: str | None = typer.Option(None, "--url", help="Redis URL (default $REDIS_URL)"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    limit: list[str] | None = typer.Option(None, "--limit", help="QUEUE=N concurrency across all workers (repeatable)"),
    burst: bool = typer.Option(False, "--burst", help="exit when no work is left"),
    name: str | None = typer.Option(None, "--name", help="worker name (default: generated)"),
) -> None:
    """Run one worker: rq's own SimpleWorker (with rq's scheduler) on these queues; `rq worker --with-scheduler` on
    the same queues does the same work. --limit QUEUE=N sets that queue's RateLimit concurrency in Redis now."""
    configure_logging()
    try:
        from envqa.core.queues import normalize_queue
        from envqa.scheduler.dispatch import set_limit
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

        def publish_flags(w) -> None:  # a flag given here wins until the next enqueue states the limit again
            for q in flagged:
                set_limit(conn, settings, q)

        run_worker(conn, names, settings, burst=burst, name=name, on_start=publish_flags)
    except EnvQAError as e:
        fail(e)
    except ValueError as e:
        fail(InputError("--url", str(e)))


@app.command("queues")
def queues_cmd(
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    url: str | None = typer.Option(None, "--url", help="Redis URL (default $REDIS_URL)"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
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
        fail(e)
    if as_json:
        sys.stdout.write(json.dumps({"queues": [r.model_dump(mode="json") for r in rows]}) + "\n")
        return
    from rich.table import Table

    table = Table("queue", "depth", "delayed", "running", "limit", "parked until", "reclaimed")
    for r in rows:
        table.add_row(
            r.queue,
            str(r.depth),
            str(r.delayed),
            str(r.running),
            str(r.limit or "-"),
            r.parked_until.isoformat(timespec="seconds") if r.parked_until else "-",
            str(r.reclaimed),
        )
    Console().print(table)


@app.command()
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


@app.command("report")
def report_cmd(
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


from envqa.app.cli_runs import register as _register_run_commands  # noqa: E402  (qa runs/show/approve/reject/status)

_register_run_commands(app)

from envqa.app.cli_generate import register as _register_generate_commands  # noqa: E402  (qa new / qa generate)

_register_generate_commands(app)

from envqa.app.cli_rules import register as _register_rules_command  # noqa: E402  (qa rules)

_register_rules_command(app)

from envqa.app.cli_analyze import register as _register_analyze_command  # noqa: E402  (qa analyze, issue 33)

_register_analyze_command(app)


@app.command("diff")
def diff_cmd(
    run_id: str = typer.Argument(..., help="the run whose versions to compare"),
    a: str | None = typer.Argument(None, help="version (or unique prefix); default: B's parent"),
    b: str | None = typer.Argument(None, help="version (or unique prefix); default: the run's newest"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Print the unified diff between two versions of a run's environment."""
    from envqa.app.cli_versions import diff_versions

    try:
        raise typer.Exit(diff_versions(cli_config(config, {}), run_id, a, b, as_json))
    except EnvQAError as e:
        fail(e, as_json)


@app.command("export")
def export_cmd(
    run_id: str = typer.Argument(..., help="the run whose version to export"),
    dest: Path = typer.Argument(..., help="new (or empty) directory to write the task to"),
    version: str | None = typer.Option(None, "--version", help="version (or prefix); default: last adopted"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Write a version of the run's environment as a normal task directory."""
    from envqa.app.cli_versions import export_version

    try:
        raise typer.Exit(export_version(cli_config(config, {}), run_id, dest, version, as_json))
    except EnvQAError as e:
        fail(e, as_json)


def main() -> None:
    escape_help(app)  # help text is plain: "[analyst] model" must not read as markup
    try:
        app()
    except sqlite3.OperationalError as e:  # e.g. the state directory is read-only
        err.print(f"[bold red]error:[/] state database: {e}")
        sys.exit(3)
    except Exception:  # noqa: BLE001 - a bug of ours: show it, but never exit 1 (that means "findings")
        err.print_exception()
        sys.exit(3)


if __name__ == "__main__":
    main()
