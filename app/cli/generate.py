"""`qa new` (a blank Harbor task, no model) and `qa generate` (spec.md -> checked task, optionally N variants)."""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from envqa.app.cli.common import cli_config, err, fail
from envqa.core.errors import EnvQAError, InputError
from envqa.core.logs import configure_logging


def print_generation(gen: dict, console: Console) -> None:
    """Every attempt: the step it failed at, how far it got, and the failure's first lines."""
    table = Table(title=f"generation from {gen.get('spec_dir')} ({gen.get('model')})", expand=True)
    for col in ("attempt", "stage", "reached", "files", "detail"):
        table.add_column(col, overflow="fold")
    for a in gen.get("attempts", []):
        table.add_row(
            str(a["attempt"]), a["stage"], a["reached"], str(len(a["files"])), "\n".join(a["detail"].splitlines()[:6])
        )
    console.print(table)
    console.print(
        f"task: {gen['task_dir']}" if gen.get("passed") else "[red]no task passed; nothing was written[/]",
        highlight=False,
        soft_wrap=True,
    )


def print_yield(batch: dict, console: Console) -> None:
    table = Table(title=f"yield of {batch['count']} variant(s) of {batch['spec_dir']}", expand=True)
    for col in ("stage", "variants", "share"):
        table.add_column(col)
    for row in batch["yield"]:
        n = row["variants"]
        table.add_row(
            row["stage"], "-" if n is None else f"{n}/{row['of']}", "-" if n is None else f"{n / max(row['of'], 1):.0%}"
        )
    console.print(table)


def new(
    name: str = typer.Argument(..., help="task name; the task is written to ./NAME (or --dir)"),
    directory: Path | None = typer.Option(None, "--dir", help="where to write it (default ./NAME)"),
    steps: int = typer.Option(
        0,
        "--steps",
        min=0,
        max=20,
        help="a multi-step task of N [[steps]] (steps/step-1..N, as `harbor init --steps N`)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
) -> None:
    """Scaffold a blank Harbor task, schema 1.4 (no model): `qa lint` is clean on it, its oracle passes, its
    nop fails."""
    configure_logging()
    from envqa.agents.generator import scaffold_task

    try:
        if not name.strip() or "/" in name or name.startswith("."):
            raise InputError("NAME", f"{name!r} is not a task name (no slashes, not starting with a dot)")
        dest = scaffold_task(name, directory or Path(name), steps=steps)
    except EnvQAError as e:
        fail(e, as_json)
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    if as_json:
        sys.stdout.write(json.dumps({"task_dir": str(dest), "files": files}) + "\n")
    else:
        Console(soft_wrap=True).print(f"task: {dest}  ({', '.join(files)})", highlight=False)


def generate(
    spec_dir: Path = typer.Argument(..., help="directory holding spec.md (and optional seed files in files/)"),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="where to write the task (default: DIR-task beside "
        "DIR); with --count N, the variants go to OUT/<name>-<i>",
    ),
    count: int = typer.Option(1, "--count", min=1, max=50, help="distinct variants to generate concurrently"),
    keep: str | None = typer.Option(
        None,
        "--keep",
        help="in_band: run the QA loop on each accepted variant and keep only those clean and in band",
    ),
    loop: bool = typer.Option(
        False,
        "--loop",
        help="run the QA loop on each accepted variant (yield columns 'clean after hunt' and 'in band')",
    ),
    generator_model: str | None = typer.Option(None, "--generator-model", help="[generator] model"),
    oracle_runs: int | None = typer.Option(None, "--oracle-runs", min=1, help="[generator] oracle_runs"),
    max_repairs: int | None = typer.Option(None, "--max-repairs", min=0, help="[generator] max_repairs"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Write a Harbor task from spec.md, build it, and repair it until its oracle passes and its nop fails.
    Exit 0 when at least one task was written, 1 when none passed, 2 on bad input, 3 on infra."""
    configure_logging()
    from envqa.agents.generator import read_spec, require_model

    try:
        if keep not in (None, "in_band"):
            raise InputError("--keep", f"unknown value {keep!r} (known: in_band)")
        cfg = cli_config(
            config,
            {
                "generator.model": generator_model,
                "generator.oracle_runs": oracle_runs,
                "generator.max_repairs": max_repairs,
            },
        )
        read_spec(spec_dir)
        require_model(cfg)
        dest = out or spec_dir.resolve().parent / f"{spec_dir.resolve().name}-task"
        if dest.exists() and any(dest.iterdir()):
            raise InputError(str(dest), "exists and is not empty: choose another --out")
        batch = _generate(cfg, spec_dir, dest, count)
        if loop or keep:
            batch = run_loop_on(batch, cfg, keep_in_band=keep == "in_band")
    except EnvQAError as e:
        fail(e, as_json)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: no task was written for unfinished variants[/]")
        raise typer.Exit(130) from None
    body = batch.public()
    if as_json:
        sys.stdout.write(json.dumps(body) + "\n")
    else:
        console = Console()
        for v in body["variants"]:
            print_generation(v, console)
        if count > 1 or batch.looped:
            print_yield(body, console)
    kept = [v for v in body["variants"] if v.get("task_dir")]
    raise typer.Exit(0 if kept else 1)


def _generate(cfg, spec_dir: Path, dest: Path, count: int):
    from envqa.app.executors import open_executor
    from envqa.app.runner import make_backend
    from envqa.graphs.generate_batch import generate_batch
    from envqa.graphs.run_graph import RunDeps
    from envqa.store.db import Store
    from envqa.store.versions import VersionStore

    backend = make_backend(cfg)
    backend.check()  # Docker down -> exit 3 before any model call
    cfg.home.mkdir(parents=True, exist_ok=True)
    store = Store(cfg.db_path)
    with open_executor(cfg, backend, store) as executor:  # each trial removes its own container
        return generate_batch(
            RunDeps(config=cfg, store=store, versions=VersionStore(cfg, store), backend=backend, executor=executor),
            spec_dir,
            dest,
            count,
        )


def run_loop_on(batch, config, keep_in_band: bool):
    """The QA loop on each accepted variant (sequentially: each run opens its own executor); with
    `keep_in_band`, variants that are not in band are removed from the output directory."""
    from envqa.app.runner import execute_run  # heavy imports (docker, langgraph) only when running

    batch.looped = True
    for v in batch.variants:
        if not v.generation.passed:
            continue
        v.run_id = f"run-{uuid.uuid4().hex[:10]}"
        report = execute_run(Path(v.generation.task_dir), config, v.run_id, quiet=True, approval_mode="wait")
        v.verdict, v.in_band = report.get("verdict"), report.get("in_band")
    if keep_in_band:
        for v in batch.variants:
            if v.generation.passed and not v.banded:
                shutil.rmtree(v.generation.task_dir, ignore_errors=True)
                v.generation.task_dir = None
    return batch
