"""`qa runs`, `qa show`, `qa approve`, `qa reject`, `qa status`, and the loop's parts of `qa run`.

Registered on the main Typer app by app/cli.py. These read the store (no Docker, no graph) except
approve/reject, which continue the run: in this process, or with REDIS_URL as a job on the `control`
queue. Each has `--json` (one object on stdout).
"""

from __future__ import annotations

import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console

from envqa.core.config import QAConfig
from envqa.core.errors import EnvQAError, InputError
from envqa.core.verdicts import exit_code

err = Console(stderr=True)
FINAL = ("finished", "awaiting_approval", "failed")


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
        store.set_run_status(run_id, "queued")
        store.set_loop(run_id, approval_mode=mode)
        job = enqueue_graph(config, run_id, kind="start", env_dir=str(Path(env_dir).resolve()), approval_mode=mode)
    if as_json:
        sys.stdout.write(json.dumps({"run_id": run_id, "job_id": job, "status": "queued"}) + "\n")
    else:
        Console().print(run_id, highlight=False)


def _age(iso: str | None) -> str:
    if not iso:
        return "-"
    sec = (datetime.now(UTC) - datetime.fromisoformat(iso)).total_seconds()
    return f"{sec:.0f}s" if sec < 120 else f"{sec / 60:.0f}m" if sec < 7200 else f"{sec / 3600:.1f}h"


def status_of(config: QAConfig, run_id: str) -> dict:
    from envqa.app.approvals import open_store, spec_conflicts

    store = open_store(config)
    row = store.get_run(run_id)
    if row is None:
        raise InputError(str(config.db_path), f"no run with id {run_id!r}")
    loop = store.get_loop(run_id) or {}
    counts = store.trial_counts(run_id)
    return {
        "run_id": run_id,
        "env_name": row["env_name"],
        "status": row["status"],
        "verdict": row["verdict"],
        "node": loop.get("node"),
        "iteration": loop.get("iteration") or 0,
        "version": loop.get("version"),
        "band_call": loop.get("band_call"),
        "stop_reason": loop.get("stop_reason"),
        "pending_proposal": loop.get("pending_proposal"),
        "approval_mode": loop.get("approval_mode"),
        "trials": counts,
        "created_at": row["created_at"],
        "finished_at": row["finished_at"],
        "pending_spec_conflicts": spec_conflicts(store, loop.get("pending_proposal")),
    }  # issue 13


def version_rows(report: dict) -> list[dict]:
    out = []
    for v in report.get("versions") or []:
        band = v.get("band") or {}
        pooled = band.get("pooled") or {}
        out.append(
            {
                "version": v["version"],
                "author": v["author"],
                "approval": (v.get("approval") or {}).get("approver"),
                "pass_at_1": pooled.get("pass_at_1"),
                "n": pooled.get("n"),
                "band_call": band.get("call"),
                "open_findings": sorted({f["rule"] for f in v.get("findings", []) if f.get("severity") != "info"}),
            }
        )
    return out


def print_loop(report: dict, console: Console, decisions: bool = True) -> None:
    """`qa show`'s loop part: one row per version, then (`decisions`) print_decisions. Ids stay whole
    (app/term.py): a list at narrow widths."""
    from rich.markup import escape

    from envqa.app.term import print_rows

    rows = version_rows(report)
    if rows:
        table = [
            [
                r["version"][:12],
                escape(r["author"]).replace("+", "+\n"),
                escape(r["approval"] or "-"),
                "-" if r["pass_at_1"] is None else f"{r['pass_at_1']:.2f} (n={r['n']})",
                r["band_call"] or "-",
                "\n".join(r["open_findings"]) or "none",
            ]
            for r in rows
        ]
        print_rows(
            console,
            "versions",
            ["version", "author", "approved by", "pass@1", "band", "open findings"],
            table,
            ("version", "author", "open findings"),
        )
    if not decisions:
        return
    print_decisions(report, console)


def print_decisions(report: dict, console: Console) -> None:
    """Each adopted revision's author, the findings it addresses, its gate and who approved it; why the loop
    stopped; the proposal waiting for a decision and the commands that decide it."""
    if report.get("versions"):
        gates = {p["candidate_version"]: p for p in report.get("proposals") or [] if p.get("status") == "adopted"}
        for v in (report.get("versions") or [])[1:]:
            proposal = gates.get(v["version"]) or {}
            checks = ", ".join(
                f"{c['name']} {'ok' if c['passed'] else 'FAILED'}"
                for c in (proposal.get("gate") or {}).get("checks", [])
            )
            console.print(
                f"version {v['version'][:12]}: {v['author']} for {', '.join(proposal.get('addresses') or [])}"
                f"; gate: {checks or '-'}" + (f" (proposal {proposal['proposal_id']})" if proposal else ""),
                highlight=False,
                markup=False,
            )
            approval = v.get("approval") or {}
            if approval.get("approver") == "auto":
                console.print(
                    f"version {v['version'][:12]} was auto-approved (--approval auto) after passing the gate",
                    highlight=False,
                )
            elif approval:
                how = {"approve": "approved", "edit": "edited and approved"}.get(approval["action"], approval["action"])
                console.print(
                    f"version {v['version'][:12]} was {how} by {approval['approver']}"
                    + (f": {approval['reason']}" if approval.get("reason") else ""),
                    highlight=False,
                    markup=False,
                )
    if report.get("stop_reason"):
        console.print(f"loop stopped: {report['stop_reason']}", highlight=False, markup=False)
    pending = report.get("awaiting_approval")
    if pending:
        from envqa.app.approval_prompt import show_proposal

        show_proposal(pending, console)
        rid = report["run_id"]
        console.print(
            f"awaiting approval: qa approve {rid}  |  qa approve {rid} --edit PATCH  |  qa reject {rid} --reason TEXT",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


def _cfg(config: Path | None) -> QAConfig:
    """Every command here starts with this: logs to stderr (stdout is for --json), then the config."""
    from envqa.core.config import load_config
    from envqa.core.logs import configure_logging

    configure_logging()
    return load_config(config, {})


def fail(e: EnvQAError) -> None:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
    raise typer.Exit(e.exit_code)


def _out(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")


CONFIG_OPT = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)")
JSON_OPT = typer.Option(False, "--json", help="print one JSON object")
HERE_OPT = typer.Option(
    False,
    "--here",
    help="continue the run in this process even when REDIS_URL is set "
    "(default there: enqueue the continuation on the `control` queue)",
)


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
        cfg = _cfg(config)
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
            _out({"decision": decision, **result})
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
        _out({**result, "decision": decision})
    else:
        from envqa.app.report import print_report

        print_report(result, Console())  # the story in order, a new pending proposal included
    raise typer.Exit(exit_code(result["verdict"]))


def register(app: typer.Typer) -> None:
    @app.command()
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

    @app.command()
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

    @app.command()
    def runs(
        as_json: bool = JSON_OPT, limit: int = typer.Option(50, "--limit", min=1), config: Path | None = CONFIG_OPT
    ) -> None:
        """Runs in this QA_HOME: id, environment, status, iteration, band call, age."""
        from envqa.app.approvals import open_store, spec_conflicts

        try:
            store = open_store(_cfg(config))
            rows = store.list_runs(limit)
        except EnvQAError as e:
            fail(e)
        if as_json:
            _out(
                {
                    "runs": [
                        {**r, "pending_spec_conflicts": spec_conflicts(store, r.get("pending_proposal"))} for r in rows
                    ]
                }
            )
            return
        from rich.markup import escape

        from envqa.app.term import print_rows

        table = []
        for r in rows:
            pending = r["pending_proposal"]
            verdict = f" ({r['verdict']})" if r["verdict"] and r["verdict"] != r["status"] else ""
            table.append(
                [
                    r["run_id"],
                    escape(r["env_name"] or "-"),
                    f"{r['status']}{verdict}, iteration {r['iteration'] or 0}, band {r['band_call'] or '-'}",
                    escape(pending or r["stop_reason"] or "-")
                    + (" (CONTRADICTS THE SPEC)" if pending and spec_conflicts(store, pending) else ""),
                    _age(r["created_at"]),
                ]
            )
        print_rows(Console(), "runs", ["run", "environment", "status", "stop / pending", "age"], table, ("run",))

    @app.command()
    def show(run_id: str = typer.Argument(...), as_json: bool = JSON_OPT, config: Path | None = CONFIG_OPT) -> None:
        """A run's story: versions, pass rates per model, labels, findings, spend, the pending proposal."""
        try:
            cfg = _cfg(config)
            st = status_of(cfg, run_id)
            from envqa.app.approvals import open_store

            report = open_store(cfg).run_report(run_id) or {}  # the store's report, as `qa serve` reads it
        except EnvQAError as e:
            fail(e)
        summary = {
            **st,
            "versions": version_rows(report),
            "open_findings": sorted({f["rule"] for f in report.get("findings", []) if f.get("severity") != "info"}),
            "awaiting_approval": report.get("awaiting_approval"),
            "in_band": report.get("in_band"),
        }
        if as_json:
            _out(summary)
            return
        console = Console()
        console.print(
            f"run {run_id} ({st['env_name']}): {st['status']}, iteration {st['iteration']}, "
            f"verdict {st['verdict'] or '-'}",
            highlight=False,
        )
        if report:
            from envqa.app.show_story import print_story
            from envqa.core.layout import RunLayout

            # the story in order: the versions, what was found in each, what was proposed, gated and
            # approved (print_decisions), then what it cost and where the report is
            print_loop(report, console, decisions=False)
            print_story(
                report, console, RunLayout(cfg.runs_dir, run_id).root / "report.html", decisions=print_decisions
            )

    @app.command()
    def status(
        run_id: str = typer.Argument(...),
        follow: bool = typer.Option(
            False, "--follow", "-f", help="keep printing until the run ends or waits for approval"
        ),
        timeout: float = typer.Option(
            0, "--timeout", min=0, help="with --follow: give up after this many seconds (exit 3); 0 = no limit"
        ),
        as_json: bool = JSON_OPT,
        config: Path | None = CONFIG_OPT,
    ) -> None:
        """Where a run is: status, iteration, version, trials by state, why it stopped or what it waits for."""
        try:
            cfg = _cfg(config)
            st = status_of(cfg, run_id)
            deadline = time.monotonic() + timeout if timeout else None
            last = None
            while follow and st["status"] not in FINAL:
                line = (st["status"], st["node"], st["iteration"], json.dumps(st["trials"], sort_keys=True))
                if line != last and not as_json:
                    err.print(
                        f"{run_id}: {st['status']} in {st['node'] or '-'} iteration {st['iteration']} "
                        f"trials {st['trials']}",
                        highlight=False,
                    )
                last = line
                if deadline and time.monotonic() > deadline:
                    raise EnvQAError(f"{run_id} still {st['status']} after {timeout:g}s")
                time.sleep(1.0)
                st = status_of(cfg, run_id)
        except EnvQAError as e:
            fail(e)
        if as_json:
            _out(st)
        else:
            where = f" in {st['node']}" if st["node"] and st["status"] not in FINAL else ""
            Console().print(
                f"{run_id} ({st['env_name']}): {st['status']}{where}, iteration {st['iteration']}, version "
                f"{(st['version'] or '-')[:12]}, band {st['band_call'] or '-'}, trials {st['trials']}"
                + (f"\nstopped: {st['stop_reason']}" if st["stop_reason"] else "")
                + (f"\nawaiting approval of {st['pending_proposal']}" if st["pending_proposal"] else "")
                + "".join(f"\nCONTRADICTS THE SPEC: {c}" for c in st["pending_spec_conflicts"]),
                highlight=False,
            )
        if follow:
            raise typer.Exit(exit_code(st["verdict"]) if st["status"] != "failed" else 3)
