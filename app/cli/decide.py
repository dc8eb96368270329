"""`qa approve` and `qa reject`: decide a run's pending revision, then continue the run: in this process, or with
REDIS_URL as a job on the `control` queue (unless --here). Each has `--json` (one object on stdout)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer
from rich.console import Console

from envqa.app.cli.common import CONFIG_OPT, JSON_OPT, err, fail, logged_config, print_json
from envqa.core.errors import EnvQAError, InputError
from envqa.core.verdicts import exit_code

HERE_OPT = typer.Option(
    False,
    "--here",
    help="continue the run in this process even when REDIS_URL is set "
    "(default there: enqueue the continuation on the `control` queue)",
)


def approve(
    run_id: str = typer.Argument(..., help="the run awaiting approval"),
    edit: Path | None = typer.Option(
        None, "--edit", help="a replacement patch (unified diff) to adopt instead; it goes through the gate again"
    ),
    reason: str | None = typer.Option(None, "--reason", help="why (recorded with the decision)"),
    approver: str | None = typer.Option(None, "--as", help="who decides (default cli:$USER)"),
    here: bool = HERE_OPT,
    as_json: bool = JSON_OPT,
    config: Path | None = CONFIG_OPT,
) -> None:
    """Approve the pending revision (or replace it with --edit) and continue the run."""
    patch = None
    if edit is not None:
        if not edit.is_file():
            fail(InputError(str(edit), "no such patch file"))
        patch = edit.read_text()
    _decide_and_continue(run_id, "edit" if patch else "approve", reason, patch, as_json, config, approver, here)


def reject(
    run_id: str = typer.Argument(..., help="the run awaiting approval"),
    reason: str = typer.Option(..., "--reason", help="why (recorded, and in the report)"),
    approver: str | None = typer.Option(None, "--as", help="who decides (default cli:$USER)"),
    here: bool = HERE_OPT,
    as_json: bool = JSON_OPT,
    config: Path | None = CONFIG_OPT,
) -> None:
    """Reject the pending revision; the run ends with the reason recorded."""
    _decide_and_continue(run_id, "reject", reason, None, as_json, config, approver, here)


def _decide_and_continue(
    run_id: str,
    action: str,
    reason: str | None,
    patch: str | None,
    as_json: bool,
    config: Path | None,
    approver: str | None,
    here: bool,
) -> None:
    from envqa.app.approval_prompt import cli_approver, make_ask
    from envqa.app.approvals import decide
    from envqa.app.resume import continue_run

    try:
        cfg = logged_config(config)
        outcome = decide(cfg, run_id, action, approver or cli_approver(), reason, patch)
        if outcome.already_decided:
            err.print(
                f"already decided: {outcome.action} by {outcome.approver} at {outcome.decided_at:%Y-%m-%d %H:%M:%S}"
                " (this decision changed nothing)",
                highlight=False,
            )
        if outcome.spec_conflicts and outcome.action != "reject":
            err.print(
                "[bold red]note:[/] this revision contradicts the task's spec: " + "; ".join(outcome.spec_conflicts),
                highlight=False,
            )
        ask = make_ask(err) if (cfg.loop.approval == "prompt" and sys.stdin.isatty()) else None
        result = continue_run(cfg, run_id, detach=not here, quiet=as_json, console=err, ask=ask)
    except EnvQAError as e:
        fail(e)
    decision = outcome.model_dump(mode="json")
    if "verdict" not in result:  # enqueued on the control queue, or another process continues it
        if as_json:
            print_json({"decision": decision, **result})
        else:
            Console().print(
                f"{outcome.action} recorded; "
                + (
                    f"continuing on the workers (job {result['enqueued']})"
                    if result.get("enqueued")
                    else f"run is {result.get('status')}, not continued here"
                ),
                highlight=False,
            )
        return
    if as_json:
        print_json({**result, "decision": decision})
    else:
        from envqa.app.report import print_report

        print_report(result, Console())  # the story in order, a new pending proposal included
    raise typer.Exit(exit_code(result["verdict"]))
