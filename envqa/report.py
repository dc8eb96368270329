"""Human-readable rendering of a run report (the `--json` document) with rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "dim"}
VERDICT = {"clean": "[bold green]clean[/]", "findings": "[bold red]findings[/]",
           "incomplete": "[bold yellow]incomplete (infrastructure)[/]"}


def print_findings(findings: list[dict], console: Console, title: str = "findings") -> None:
    if not findings:
        console.print(f"{title}: [green]no findings[/]")
        return
    table = Table(title=title, show_lines=True)
    for col in ("rule", "label", "severity", "message", "where"):
        table.add_column(col)
    for f in findings:
        table.add_row(f["rule"], f["label"], f"[{STYLE.get(f['severity'], '')}]{f['severity']}[/]",
                      f["message"] + (f"\nfix: {f['fix']}" if f.get("fix") else ""), f.get("location") or "")
    console.print(table)


def print_report(report: dict, console: Console) -> None:
    env = report.get("environment", {})
    trials = Table(title=f"trials of {env.get('name')} ({(env.get('version') or '')[:12]})")
    for col in ("agent", "model", "outcome", "reward", "error", "seconds"):
        trials.add_column(col)
    for t in report.get("trials", []):
        trials.add_row(t["agent"], t.get("model") or "-", t["outcome"], str(t["reward"]),
                       t.get("error_class") or "", str(t.get("seconds", "")))
    console.print(trials)
    print_findings(report.get("findings", []), console)
    for line in report.get("incomplete", []):
        console.print(f"[yellow]infrastructure:[/] {line}")
    console.print(f"run {report['run_id']}: verdict {VERDICT.get(report['verdict'], report['verdict'])}")
