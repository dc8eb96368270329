"""`--approval prompt`: show a gated proposal on the terminal and ask approve / reject / edit.

The answer goes back to the run's graph as `Command(resume=answer)`; the approver is the CLI user.
An edit asks for a file holding the replacement patch (a unified diff), which is gated again.
"""

from __future__ import annotations

import getpass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.syntax import Syntax

from envqa.app.term import print_rows
from envqa.core.models import SpecCheck


def cli_approver() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # noqa: BLE001 - no user name (a container with an odd uid): still say it was the CLI
        return "cli:unknown"


def spec_conflict_lines(proposal: dict) -> list[str]:
    """The warning a human must see before deciding on a revision that contradicts the task's spec."""
    check = proposal.get("spec_check") or {}
    if not check.get("flagged"):
        return []
    return [
        "CONTRADICTS THE SPEC this task was generated from (never auto-approved; you decide):",
        *(f"  - {r}" for r in SpecCheck.model_validate(check).reasons()),
    ]


def show_proposal(payload: dict, console: Console) -> None:
    """The proposal, its diff and its gate, as plain text (a rationale or a gate detail is never markup)."""
    p = payload["proposal"]
    title = f"proposal {p['proposal_id']} for {payload.get('env_name')} (version {payload['version'][:12]})"
    console.rule(escape(title))
    console.print(
        f"author: {p['author']}   addresses: {', '.join(p['addresses']) or '-'}   "
        f"request: {(payload.get('request') or {}).get('kind', '-')}",
        highlight=False,
        markup=False,
    )
    for line in spec_conflict_lines(p):
        console.print(f"[bold red]{escape(line)}[/]", highlight=False)
    if p.get("rationale"):
        console.print(f"why: {p['rationale']}", highlight=False, markup=False)
    for effect in p.get("expected_effect") or []:
        console.print(f"  expected: {effect}", highlight=False, markup=False)
    console.print(Syntax(payload["diff"], "diff", word_wrap=True))
    gate = payload.get("gate") or {}
    if gate:
        rows = [
            [c["name"], "[green]pass[/]" if c["passed"] else "[red]fail[/]", escape(c.get("detail") or "")]
            for c in gate.get("checks", [])
        ]
        print_rows(
            console,
            f"gate: {'passed' if gate['passed'] else 'FAILED'}",
            ["check", "result", "detail"],
            rows,
            ("check",),
        )
    band = payload.get("band") or {}
    if band.get("measured"):
        pooled = band["pooled"]
        console.print(
            f"sweep so far: pooled pass@1 {pooled['passes']}/{pooled['n']} "
            f"[{pooled['ci_low']:.2f}, {pooled['ci_high']:.2f}], call {band['call']}",
            highlight=False,
            markup=False,
        )


def make_ask(console: Console):
    """The `ask(payload) -> answer` callback for the run's approval checkpoints."""

    def ask(payload: dict) -> dict:
        if payload.get("edit_refused"):  # the same proposal again: the last replacement patch was refused
            console.print(f"[red]edit refused, nothing recorded: {escape(payload['edit_refused'])}[/]")
        else:
            show_proposal(payload, console)
        who = cli_approver()
        while True:
            # markup=False: "[a/r/e]" is rich markup syntax and would print as nothing
            choice = console.input("approve / reject / edit? [a/r/e] ", markup=False).strip().lower()[:1]
            if choice == "a":
                return {"action": "approve", "approver": who, "reason": None, "patch": None}
            if choice == "r":
                reason = console.input("reason: ", markup=False).strip() or "rejected at the prompt"
                return {"action": "reject", "approver": who, "reason": reason, "patch": None}
            if choice == "e":
                path = Path(console.input("file with the replacement patch: ", markup=False).strip()).expanduser()
                if path.is_file():
                    return {
                        "action": "edit",
                        "approver": who,
                        "reason": f"edited at the prompt ({path.name})",
                        "patch": path.read_text(),
                    }
                console.print(f"[red]no such file: {path}[/]")

    return ask
