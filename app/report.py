"""Human-readable rendering of a run report (the `--json` document) with rich tables."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "dim"}
VERDICT = {"clean": "[bold green]clean[/]", "findings": "[bold red]findings[/]",
           "incomplete": "[bold yellow]incomplete (could not finish, or could not judge)[/]"}


def uncut(col: str, values: list) -> dict:
    """Column options: identifiers (agent, model) are never folded or cut; the rest wrap to fit."""
    if col in ("agent", "model", "rule"):
        return {"no_wrap": True, "min_width": max([len(col), *(len(str(v)) for v in values)])}
    return {"overflow": "fold"}


def print_findings(findings: list[dict], console: Console, title: str = "findings") -> None:
    if not findings:
        console.print(f"{title}: [green]no findings[/]")
        return
    table = Table(title=title, show_lines=True, expand=True)
    for col in ("rule", "label", "severity", "message", "where"):
        table.add_column(col, **uncut(col, [f["rule"] for f in findings]))
    for f in findings:
        table.add_row(f["rule"], f["label"], f"[{STYLE.get(f['severity'], '')}]{f['severity']}[/]",
                      f["message"] + (f"\nfix: {f['fix']}" if f.get("fix") else ""), f.get("location") or "")
    console.print(table)


def print_report(report: dict, console: Console) -> None:
    env = report.get("environment", {})
    trials = Table(title=f"trials of {env.get('name')} ({(env.get('version') or '')[:12]})", expand=True)
    for col in ("agent", "model", "outcome", "reward", "error", "seconds"):
        trials.add_column(col, **uncut(col, [t.get(col) or "" for t in report.get("trials", [])]))
    for t in report.get("trials", []):
        trials.add_row(t["agent"], t.get("model") or "-", t["outcome"], str(t["reward"]),
                       t.get("error_class") or "", str(t.get("seconds", "")))
    console.print(trials)
    print_findings(report.get("findings", []), console)
    if report.get("sweep"):
        print_sweep(report["sweep"], console)
    if report.get("coverage"):
        print_coverage(report["coverage"], console)
    inconclusive = {o["outcome"] for o in report.get("inconclusive") or []}
    for line in report.get("incomplete", []):
        kind = "inconclusive" if line.split(":", 1)[0] in inconclusive else "infrastructure"
        console.print(f"[yellow]{kind}:[/] {escape(line)}", highlight=False)
    console.print(f"run {report['run_id']}: verdict {VERDICT.get(report['verdict'], report['verdict'])}")
    if report.get("report_html"):  # the path on a line of its own, never folded: it is meant to be copied
        console.print(f"report: {report['report_html']}", highlight=False, soft_wrap=True)


def print_coverage(coverage: list[dict], console: Console) -> None:
    """Which probes ran, which were skipped and why (nothing is skipped silently)."""
    table = Table(title="coverage", expand=True)
    for col in ("probe", "status", "why"):
        table.add_column(col, **uncut("rule" if col == "probe" else col, [c["probe"] for c in coverage]))
    for c in coverage:
        style = {"ran": "green", "skipped": "yellow", "lost": "red", "inconclusive": "yellow"}.get(c["status"], "")
        table.add_row(c["probe"], f"[{style}]{c['status']}[/]", escape(c.get("reason") or ""))
    console.print(table)


def print_sweep(sweep: dict, console: Console) -> None:
    """Solver sweep: pass@1 with its interval, pass@k, infra, band call and spend per model."""
    table = Table(title=f"solver sweep (band {sweep['band'][0]:.0%}-{sweep['band'][1]:.0%})", expand=True)
    for col in ("model", "n", "pass@1 [CI]", "pass@k", "infra", "band", "stop", "tokens", "USD"):
        table.add_column(col, **uncut(col, [*sweep["models"], "overall"]))
    rows = [*sweep["models"].items(), ("overall", {**sweep["overall"], "band_decision": "", "stop_reason": ""})]
    for name, m in rows:
        p1 = "-" if m["pass_at_1"] is None else f"{m['pass_at_1']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]"
        pk = " ".join(f"@{k}={v:.2f}" for k, v in m["pass_at_k"].items() if v is not None and k != "1")
        table.add_row(name, str(m["n"]), p1, pk, str(m["infra"]), m["band_decision"], m["stop_reason"],
                      str(m["spend"]["tokens"]), f"{m['spend']['cost_usd']:.4f}" if m["spend"]["priced"] else "unpriced")
    console.print(table)
    if sweep.get("budget_stop"):
        console.print(f"[yellow]{sweep['budget_stop']}[/]")
