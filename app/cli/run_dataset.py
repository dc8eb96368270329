"""`qa run PATH...` on a dataset (issue 25): the command's dataset half, called by app/cli/run.py `run`.

One task given alone keeps today's `qa run` (same output, same exit codes); several paths, a folder of tasks, a
filter, `--jobs`, `--format markdown|github` or `--resume ds-...` make a dataset run: one id, one row per task,
one exit code (dataset_exit_code), a summary table (or `--json`, or the CI summary) and the dataset's HTML report.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envqa.app.cli.common import err, fail
from envqa.app.dataset import default_jobs, discover, is_dataset_run
from envqa.app.dataset_models import DatasetReport, TaskRow
from envqa.app.dataset_rows import top_finding
from envqa.core.config import QAConfig
from envqa.core.errors import EnvQAError, InfraError, InputError

FORMATS = ("text", "json", "markdown", "github")


def wants_dataset(paths: list[Path], resume: str | None, include, exclude, max_tasks, jobs, fmt: str | None) -> bool:
    if resume:
        return resume.startswith("ds-")
    return bool(
        is_dataset_run(paths)
        or include
        or exclude
        or max_tasks is not None
        or jobs is not None
        or fmt in ("markdown", "github")
    )


def check_format(fmt: str | None, as_json: bool) -> str:
    fmt = fmt or ("json" if as_json else "text")
    if fmt not in FORMATS:
        raise InputError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    return fmt


def run_dataset_command(
    paths: list[Path],
    make_config: Callable[[], QAConfig],
    *,
    resume: str | None,
    include: list[str] | None,
    exclude: list[str] | None,
    max_tasks: int | None,
    jobs: int | None,
    fmt: str,
    approval: str | None,
    detach: bool = False,
) -> None:
    """Run (or resume) the dataset, print it in `fmt`, exit with the dataset's exit code."""
    from envqa.app.dataset_run import (
        DatasetInterrupted,
        DatasetPlan,
        DatasetRunner,
        create_dataset,
        load_dataset,
        new_dataset_id,
    )

    as_json = fmt == "json"
    dataset_id = resume
    try:
        if detach:
            raise InputError(
                "--detach",
                "takes one task; a dataset's graphs run in this process (its trials on "
                "the REDIS_URL workers): run it without --detach",
            )
        config = make_config()
        if resume:
            config, plan, store = load_dataset(config, resume)
            if jobs is not None:
                plan.jobs = jobs
        else:
            tasks = discover(paths, include, exclude, max_tasks)
            if not tasks:
                raise InputError(
                    " ".join(map(str, paths)),
                    "no task to run: no subfolder is a task, or the filters (--task/--exclude/--max-tasks) left none",
                )
            mode = approval or config.loop.approval or "wait"
            if mode not in ("prompt", "wait", "auto"):
                raise InputError("--approval", f"expected prompt, wait or auto, got {mode!r}")
            # tasks run side by side: nobody answers a prompt in between; each waits (`qa approve RUN_ID`)
            mode = "wait" if mode == "prompt" else mode
            plan = DatasetPlan(
                new_dataset_id(),
                tasks,
                [str(p) for p in paths],
                jobs or default_jobs(),
                mode,
                {"include": include or [], "exclude": exclude or [], "max_tasks": max_tasks},
            )
            dataset_id = plan.dataset_id
            _check_engine(config)
            store = create_dataset(config, plan)
        report = _run_with_progress(DatasetRunner, config, store, plan, quiet=as_json)
    except EnvQAError as e:
        fail(e, as_json)
    except DatasetInterrupted as e:
        cause = e.__cause__
        hint = f"qa run --resume {dataset_id}"
        if isinstance(cause, InfraError):
            err.print(f"[bold red]error:[/] {escape(str(cause))}", highlight=False, soft_wrap=True)
            err.print(f"the dataset could not finish; finish it with: {hint}", highlight=False, soft_wrap=True)
            if as_json:
                sys.stdout.write(f'{{"dataset_run_id": "{dataset_id}", "error": "could not finish", "exit_code": 3}}\n')
            raise typer.Exit(3) from None
        err.print(f"[yellow]interrupted: containers removed; resume with[/] {hint}", soft_wrap=True)
        raise typer.Exit(130) from None
    emit(report, fmt)
    raise typer.Exit(report.exit_code)


def _check_engine(config: QAConfig) -> None:
    """Docker down: exit 3 once, before the dataset exists, not once per task (the graphs build images here)."""
    from envqa.app.runner import make_backend

    make_backend(config).check()


def _run_with_progress(runner_cls, config, store, plan, quiet: bool) -> DatasetReport:
    """One bar for the tasks, and each task's name and verdict as it finishes (stderr; nothing with --json)."""
    if quiet:
        return runner_cls(config, store, plan, None).run()
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    ) as progress:
        bar = progress.add_task(f"{plan.dataset_id}: tasks", total=len(plan.tasks))

        def on_done(row: TaskRow) -> None:
            first = top_finding(row)
            top = first.rule if first else (row.error or "")[:80]
            progress.console.print(
                f"  {row.name}  {row.verdict}  exit {row.exit_code}" + (f"  {top}" if top else ""),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            progress.advance(bar)

        return runner_cls(config, store, plan, on_done).run()


def emit(report: DatasetReport, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(report.model_dump_json() + "\n")
    elif fmt in ("markdown", "github"):
        sys.stdout.write(ci_text(report, fmt))
    else:
        print_summary(report, Console())


def ci_text(report: DatasetReport, fmt: str) -> str:
    """Part B's CI summary (app/ci_output.py); a plain table if this build does not have it."""
    try:
        from envqa.app.ci_output import render
    except ImportError:
        lines = ["| task | verdict | top finding | exit |", "|---|---|---|---|"]
        lines += [
            f"| {r.name} | {r.verdict} | {r.findings[0].rule if r.findings else ''} | {r.exit_code} |"
            for r in report.tasks
        ]
        return "\n".join(lines) + "\n"
    text = render(report, fmt)
    return text if text.endswith("\n") else text + "\n"


def _pass_at_1(row: TaskRow) -> str:
    if row.pass_at_1 is None:
        return "-"
    band = f" [{row.band[0]:.2f}-{row.band[1]:.2f}]" if row.band else ""
    return f"{row.pass_at_1:.2f}{band}"


def print_summary(report: DatasetReport, console: Console) -> None:
    """The triage table: one row per task (the task name and run id never fold), then the counts and the page."""
    table = Table(title=f"dataset {report.dataset_run_id}", expand=False)
    table.add_column("task", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("top finding", overflow="fold")
    table.add_column("pass@1", no_wrap=True)
    table.add_column("exit", no_wrap=True, justify="right")
    for r in report.tasks:
        top = top_finding(r)
        what = f"{top.rule} ({top.severity})" if top else (r.error or "")
        table.add_row(escape(r.name), r.verdict or "-", escape(what[:200]), _pass_at_1(r), str(r.exit_code))
    console.print(table)
    counts = ", ".join(f"{v} {k}" for k, v in sorted(report.summary.by_verdict.items()))
    seconds = f" in {report.summary.seconds:.0f}s" if report.summary.seconds is not None else ""
    console.print(f"{report.summary.tasks} tasks{seconds}: {counts}; exit {report.exit_code}", highlight=False)
    for c in report.conventions:  # said once, not on each task (app/dataset_conventions.py; --json names them)
        console.print(
            f"{c.summary} (its {c.severity}s are left out of the tasks above)", highlight=False, soft_wrap=True
        )
    if report.summary.by_rule:
        console.print(
            "most frequent findings: " + ", ".join(f"{k} ({v})" for k, v in list(report.summary.by_rule.items())[:5]),
            highlight=False,
            soft_wrap=True,
        )
    if report.report_html:
        console.print(f"dataset report: {report.report_html}", highlight=False, soft_wrap=True)
    console.print(
        f"each task: qa show RUN_ID; finish an interrupted dataset: qa run --resume {report.dataset_run_id}",
        highlight=False,
        soft_wrap=True,
    )
