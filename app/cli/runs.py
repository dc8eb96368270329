"""`qa runs`, `qa show` and `qa status`: what the store says about runs (no Docker, no graph).

Each has `--json` (one object on stdout). `qa show` prints the loop's versions and decisions (print_loop,
print_decisions here) and then the rest of the story (app/show_story.py).
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console

from envqa.app.cli.common import CONFIG_OPT, JSON_OPT, err, fail, logged_config, print_json
from envqa.core.config import QAConfig
from envqa.core.errors import EnvQAError, InputError
from envqa.core.statuses import FINAL_RUN, RunStatus
from envqa.core.verdicts import exit_code


def runs(
    as_json: bool = JSON_OPT, limit: int = typer.Option(50, "--limit", min=1), config: Path | None = CONFIG_OPT
) -> None:
    """Runs in this QA_HOME: id, environment, status, iteration, band call, age."""
    from envqa.app.approvals import open_store, spec_conflicts

    try:
        store = open_store(logged_config(config))
        rows = store.list_runs(limit)
    except EnvQAError as e:
        fail(e)
    if as_json:
        print_json(
            {"runs": [{**r, "pending_spec_conflicts": spec_conflicts(store, r.get("pending_proposal"))} for r in rows]}
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


def show(run_id: str = typer.Argument(...), as_json: bool = JSON_OPT, config: Path | None = CONFIG_OPT) -> None:
    """A run's story: versions, pass rates per model, labels, findings, spend, the pending proposal."""
    try:
        cfg = logged_config(config)
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
        print_json(summary)
        return
    console = Console()
    console.print(
        f"run {run_id} ({st['env_name']}): {st['status']}, iteration {st['iteration']}, verdict {st['verdict'] or '-'}",
        highlight=False,
    )
    if report:
        from envqa.app.show_story import print_story
        from envqa.core.layout import RunLayout

        # the story in order: the versions, what was found in each, what was proposed, gated and
        # approved (print_decisions), then what it cost and where the report is
        print_loop(report, console, decisions=False)
        print_story(report, console, RunLayout(cfg.runs_dir, run_id).root / "report.html", decisions=print_decisions)


def status(
    run_id: str = typer.Argument(...),
    follow: bool = typer.Option(False, "--follow", "-f", help="keep printing until the run ends or waits for approval"),
    timeout: float = typer.Option(
        0, "--timeout", min=0, help="with --follow: give up after this many seconds (exit 3); 0 = no limit"
    ),
    as_json: bool = JSON_OPT,
    config: Path | None = CONFIG_OPT,
) -> None:
    """Where a run is: status, iteration, version, trials by state, why it stopped or what it waits for."""
    try:
        cfg = logged_config(config)
        st = status_of(cfg, run_id)
        deadline = time.monotonic() + timeout if timeout else None
        last = None
        while follow and st["status"] not in FINAL_RUN:
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
        print_json(st)
    else:
        where = f" in {st['node']}" if st["node"] and st["status"] not in FINAL_RUN else ""
        Console().print(
            f"{run_id} ({st['env_name']}): {st['status']}{where}, iteration {st['iteration']}, version "
            f"{(st['version'] or '-')[:12]}, band {st['band_call'] or '-'}, trials {st['trials']}"
            + (f"\nstopped: {st['stop_reason']}" if st["stop_reason"] else "")
            + (f"\nawaiting approval of {st['pending_proposal']}" if st["pending_proposal"] else "")
            + "".join(f"\nCONTRADICTS THE SPEC: {c}" for c in st["pending_spec_conflicts"]),
            highlight=False,
        )
    if follow:
        raise typer.Exit(exit_code(st["verdict"]) if st["status"] != RunStatus.FAILED else 3)


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
