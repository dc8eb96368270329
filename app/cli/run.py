"""`qa run`: one task (build, oracle and nop trials, the loop) or, with several paths or a dataset's options, a
dataset (app/cli/run_dataset.py). Also the run's approval mode and `--detach`, which `qa run` alone uses.

Exit codes: 0 clean, 1 findings, 2 usage or input error, 3 run could not finish, 4 waiting for approval.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console

from envqa.app.cli.common import cli_config, err, fail
from envqa.core.config import QAConfig
from envqa.core.errors import EnvQAError, InputError
from envqa.core.logs import configure_logging
from envqa.core.statuses import RunStatus
from envqa.core.verdicts import exit_code

if TYPE_CHECKING:
    from envqa.core.environment import Environment


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
    from envqa.app.cli.run_dataset import check_format, run_dataset_command, wants_dataset  # issue 25: qa run PATH...

    try:
        fmt = check_format(fmt, as_json)
    except EnvQAError as e:
        fail(e, as_json)
    as_json = fmt == "json"
    _check_trials_from(trials_from, as_json)
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
    # unknown task.toml keys (issue 23): shown before the run, never an exit 2
    loaded, warnings = (None, []) if resume else _load_task(env_dir, as_json)
    from envqa.app.runner import execute_run  # heavy imports (docker, langgraph) only when running

    try:
        cfg = cli_config(config, overrides)
        rid = resume or run_id or f"run-{uuid.uuid4().hex[:10]}"
        mode, ask = approval_mode(approval, cfg, err)
        if detach:
            detach_run(env_dir, cfg, rid, resume=bool(resume), mode=mode, as_json=as_json)
            return
        report = execute_run(
            env_dir,
            cfg,
            rid,
            resume=bool(resume),
            quiet=as_json,
            console=err,
            approval_mode=mode,
            ask=ask,
            loaded=loaded,
        )
    except EnvQAError as e:
        fail(e, as_json)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: containers removed; resume with[/] qa run --resume " + rid)
        raise typer.Exit(130) from None
    if as_json:
        sys.stdout.write(json.dumps({**report, "warnings": warnings}) + "\n")
    else:
        _print_run_report(report, verbose)
    raise typer.Exit(exit_code(report["verdict"]))


def _check_trials_from(trials_from: list[Path] | None, as_json: bool) -> None:
    """Issue 33: bad input fails before any work."""
    for p in trials_from or []:
        if not p.is_dir():
            fail(
                InputError(str(p), "--trials-from: not a folder (a Harbor job or trial folder, or a tb run folder)"),
                as_json,
            )


def _load_task(env_dir: Path | None, as_json: bool) -> tuple[Environment | None, list[dict]]:
    """Load the task once up front so bad input fails fast, before the heavy imports and before any state is
    written; print (and return, for --json) its warnings. The run takes its snapshot from this load
    (app/runner.py `loaded`): the task is read and hashed once. A spec.md-only folder has no task yet (issue 13).
    """
    from rich.markup import escape

    from envqa.agents.generator import is_spec_dir
    from envqa.core.environment import load_environment

    loaded = None
    try:
        if not is_spec_dir(env_dir):  # spec.md only: the generate node writes the task (issue 13)
            loaded = load_environment(env_dir)
    except EnvQAError as e:
        fail(e, as_json)
    warnings = [w.public() for w in loaded.warnings] if loaded is not None else []
    for w in warnings:  # escaped: a table name such as [verifier] is not markup
        err.print(f"[yellow]warning:[/] {escape(w['message'])}", highlight=False, soft_wrap=True)
    return loaded, warnings


def _print_run_report(report: dict, verbose: bool) -> None:
    from envqa.app.report import print_report

    if report.get("generation"):  # issue 13: spec.md -> task; every attempt (the only table when none passed)
        from envqa.app.cli.generate import print_generation

        print_generation(report["generation"], Console())
    if report.get("version") or (report.get("environment") or {}).get("version"):
        print_report(report, Console(), verbose=verbose)  # the story in order, the pending proposal included


def approval_mode(flag: str | None, config: QAConfig, console: Console):
    """(mode, ask): --approval, else [loop] approval, else prompt on a terminal and wait otherwise."""
    mode = flag or config.loop.approval or ("prompt" if sys.stdin.isatty() and sys.stderr.isatty() else "wait")
    if mode not in ("prompt", "wait", "auto"):
        raise InputError("--approval", f"expected prompt, wait or auto, got {mode!r}")
    if mode != "prompt":
        return mode, None
    from envqa.app.approval_prompt import make_ask

    return mode, make_ask(console)


def detach_run(env_dir: Path | None, config: QAConfig, run_id: str, *, resume: bool, mode: str, as_json: bool) -> None:
    from envqa.scheduler.control import enqueue_graph
    from envqa.scheduler.executors import redis_url
    from envqa.store.db import Store

    if not redis_url(config):
        raise InputError("--detach", "needs REDIS_URL (or [scheduler] redis_url): workers run detached graphs")
    if mode == "prompt":
        mode = "wait"  # nobody is at a terminal on a worker
    if not resume:
        from envqa.agents.generator import is_spec_dir, require_model

        if is_spec_dir(env_dir):  # spec.md only: the worker generates the task first (issue 13)
            require_model(config, check_key=False)
    config.home.mkdir(parents=True, exist_ok=True)
    store = Store(config.db_path)
    if resume:
        if store.get_run(run_id) is None:
            raise InputError(str(config.db_path), f"no run with id {run_id!r} to resume")
        job = enqueue_graph(config, run_id, kind=f"resume-{int(time.time())}", approval_mode=mode)
    else:
        if store.get_run(run_id) is not None:
            raise InputError(str(config.db_path), f"run id {run_id!r} already exists; use --resume")
        store.create_run(run_id, str(Path(env_dir).resolve()))
        store.set_run_status(run_id, RunStatus.QUEUED)
        store.set_loop(run_id, approval_mode=mode)
        job = enqueue_graph(config, run_id, kind="start", env_dir=str(Path(env_dir).resolve()), approval_mode=mode)
    if as_json:
        sys.stdout.write(json.dumps({"run_id": run_id, "job_id": job, "status": RunStatus.QUEUED.value}) + "\n")
    else:
        Console().print(run_id, highlight=False)
