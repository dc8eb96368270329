"""Human-readable rendering of a run report (the `--json` document): the end of `qa run`, `qa approve|reject`.

It tells the run's story in order: what was found in each version, what was proposed and by whom, the gate,
the approval, then the final verdict and where the HTML report is. Coverage is one line unless `verbose`
(`qa run -v`), which also prints every trial. Tables keep ids whole (app/term.py).
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.markup import escape

from envqa.app.term import id_table, print_rows

STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "dim"}
VERDICT = {
    "clean": "[bold green]clean[/]",
    "findings": "[bold red]findings[/]",
    "incomplete": "[bold yellow]incomplete (could not finish, or could not judge)[/]",
}
FINDING_TEXT = 36  # below this width for a finding's text, findings print as a list


def uncut(col: str, values: list) -> dict:
    """Column options: identifiers (agent, model) are never folded or cut; the rest wrap to fit."""
    if col in ("agent", "model", "rule"):
        return {"no_wrap": True, "min_width": max([len(col), *(len(str(v)) for v in values)])}
    return {"overflow": "fold"}


def finding_rows(findings: list[dict]) -> list[list[str]]:
    rows = []
    for f in findings:
        text = escape(f.get("message") or "") + (f"\nfix: {escape(f['fix'])}" if f.get("fix") else "")
        if f.get("locations") or f.get("location"):  # a grouped finding: every place (core/finding_groups.py)
            text += f"\nat: {escape(', '.join(dict.fromkeys(f.get('locations') or [f['location']])))}"
        rows.append([f["rule"], f"[{STYLE.get(f['severity'], '')}]{f['severity']}[/] ({f.get('label') or '-'})", text])
    return rows


def print_findings(findings: list[dict], console: Console, title: str = "findings") -> None:
    if not findings:
        console.print(f"{escape(title)}: [green]no findings[/]")
        return
    console.print(
        id_table(
            escape(title),
            ["rule", "severity", "finding"],
            finding_rows(findings),
            ("rule",),
            console.width,
            min_text=FINDING_TEXT,
        )
    )


def trial_summary(trials: list[dict]) -> str:
    """`oracle 3/3 pass, nop 0/1 pass, claude-x 2/5 pass (1 infra)`: one line per version."""
    by: dict[str, Counter] = {}
    for t in trials:
        by.setdefault(t.get("model") or t["agent"], Counter())[t["outcome"]] += 1
    parts = []
    for who, c in by.items():
        n = sum(c.values())
        other = ", ".join(f"{k} {v}" for k, v in sorted(c.items()) if k not in ("pass", "fail"))
        parts.append(f"{who} {c['pass']}/{n} pass" + (f" ({other})" if other else ""))
    return ", ".join(parts) or "none"


def print_trials(report: dict, console: Console) -> None:
    env = report.get("environment", {})
    trials = report.get("trials", [])
    rows = [
        [
            t["agent"],
            t.get("model") or "-",
            t["outcome"],
            str(t["reward"]),
            t.get("error_class") or "",
            str(t.get("seconds", "")),
        ]
        for t in trials
    ]
    print_rows(
        console,
        escape(f"trials of {env.get('name')} ({(env.get('version') or '')[:12]})"),
        ["agent", "model", "outcome", "reward", "error", "seconds"],
        rows,
        ("agent", "model"),
    )


def print_found(report: dict, console: Console) -> None:
    """What each version's trials and probes found (the loaded version first)."""
    versions = report.get("versions") or []
    if not versions:  # a report without versions (an old run): its one set of trials and findings
        console.print(f"trials: {trial_summary(report.get('trials', []))}", highlight=False)
        print_findings(report.get("findings", []), console)
        return
    for v in versions:
        label = "loaded" if not v.get("parent") else "revision"
        console.rule(f"version {v['version'][:12]} ({label})", align="left")
        console.print(f"author: {v['author']}", highlight=False, markup=False)
        console.print(f"trials: {trial_summary(v.get('trials') or [])}", highlight=False, markup=False)
        serious = [f for f in v.get("findings") or [] if f.get("severity") != "info"]
        print_findings(serious, console, title=f"found in {v['version'][:12]}")


def gate_line(gate: dict | None) -> str:
    if not gate:
        return "gate: -"
    checks = ", ".join(f"{c['name']} {'ok' if c['passed'] else 'FAILED'}" for c in gate.get("checks", []))
    line = f"gate: {'passed' if gate.get('passed') else 'FAILED'} ({checks or 'no checks'})"
    if gate.get("still_open"):  # rules the proposal does not address (graphs/gate.py): they do not fail the gate
        line += f"; still open: {', '.join(gate['still_open'])}"
    return line


def approval_line(report: dict, proposal: dict) -> str:
    """Who decided on the proposal, from the version it made (adopted) or the run's stop reason (rejected)."""
    version = next(
        (
            v
            for v in report.get("versions") or []
            if v["version"] == proposal.get("candidate_version") and v.get("approval")
        ),
        None,
    )
    if version is not None:
        a = version["approval"]
        how = {"approve": "approved", "edit": "edited and approved", "reject": "rejected"}.get(a["action"], a["action"])
        return f"approval: {how} by {a['approver']}" + (f" ({a['reason']})" if a.get("reason") else "")
    status = proposal.get("status") or "-"
    if status == "rejected" and (report.get("stop_reason") or "").startswith("rejected"):
        return f"approval: {report['stop_reason']}"
    if (report.get("awaiting_approval") or {}).get("proposal", {}).get("proposal_id") == proposal["proposal_id"]:
        return "approval: awaiting a decision"
    return f"approval: none ({status})"


def print_proposed(report: dict, console: Console) -> None:
    """Each proposal: who wrote it and for which findings, its gate, and who approved it."""
    for p in report.get("proposals") or []:
        made = f" -> version {p['candidate_version'][:12]}" if p.get("candidate_version") else ""
        console.print(
            f"proposed: {p['proposal_id']} by {p['author']} for {', '.join(p.get('addresses') or []) or '-'}"
            f"{made} [{p.get('status') or '-'}]",
            highlight=False,
            markup=False,
        )
        console.print(f"  {gate_line(p.get('gate'))}", highlight=False, markup=False)
        console.print(f"  {approval_line(report, p)}", highlight=False, markup=False)


def coverage_line(coverage: list[dict]) -> str:
    counts = Counter(c["status"] for c in coverage)
    counted = ", ".join(f"{n} {status}" for status, n in counts.items())
    return f"coverage: {counted} (why: qa run -v, or the HTML report)"


def print_report(report: dict, console: Console, verbose: bool = False) -> None:
    """The end of a run, in order: found (per version), proposed, gate, approval, verdict, report path."""
    for notice in report.get("notices") or []:  # first: e.g. no fix can pass until the reference solution works
        console.print(f"[bold red]{escape(notice)}[/]", highlight=False)
    if verbose:
        print_trials(report, console)
    print_found(report, console)
    if report.get("proposals"):
        console.rule("proposed", align="left")
        print_proposed(report, console)
    if report.get("sweep"):
        print_sweep(report["sweep"], console)
    if report.get("coverage"):
        if verbose:
            print_coverage(report["coverage"], console)
        else:
            console.print(coverage_line(report["coverage"]), highlight=False)
    inconclusive = {o["outcome"] for o in report.get("inconclusive") or []}
    for line in report.get("incomplete", []):
        kind = "inconclusive" if line.split(":", 1)[0] in inconclusive else "infrastructure"
        console.print(f"[yellow]{kind}:[/] {escape(line)}", highlight=False)
    pending = report.get("awaiting_approval")
    if pending:
        from envqa.app.approval_prompt import show_proposal

        show_proposal(pending, console)
    if report.get("stop_reason"):
        console.print(f"loop stopped: {report['stop_reason']}", highlight=False, markup=False)
    console.print(
        f"run {report['run_id']}: verdict {VERDICT.get(report['verdict'], escape(report['verdict']))}", highlight=False
    )
    if pending:
        rid = report["run_id"]
        console.print(
            f"awaiting approval: qa approve {rid}  |  qa approve {rid} --edit PATCH  |  qa reject {rid} --reason TEXT",
            highlight=False,
            soft_wrap=True,
            markup=False,
        )
    if report.get("report_html"):  # the path on a line of its own, never folded: it is meant to be copied
        console.print(f"report: {report['report_html']}", highlight=False, soft_wrap=True, markup=False)


def print_coverage(coverage: list[dict], console: Console) -> None:
    """Which probes ran, which were skipped and why (nothing is skipped silently)."""
    rows = []
    for c in coverage:
        style = {"ran": "green", "skipped": "yellow", "lost": "red", "inconclusive": "yellow"}.get(c["status"], "")
        rows.append([c["probe"], f"[{style}]{c['status']}[/]", escape(c.get("reason") or "")])
    print_rows(console, "coverage", ["probe", "status", "why"], rows, ("probe",))


def print_sweep(sweep: dict, console: Console) -> None:
    """Solver sweep: pass@1 with its interval, pass@k, infra, band call and spend per model."""
    rows = []
    overall = {**sweep["overall"], "band_decision": "", "stop_reason": ""}
    for name, m in [*sweep["models"].items(), ("overall", overall)]:
        p1 = "-" if m["pass_at_1"] is None else f"{m['pass_at_1']:.2f} \\[{m['ci_low']:.2f}, {m['ci_high']:.2f}]"
        pk = " ".join(f"@{k}={v:.2f}" for k, v in m["pass_at_k"].items() if v is not None and k != "1")
        rows.append(
            [
                name,
                str(m["n"]),
                p1,
                pk,
                str(m["infra"]),
                m["band_decision"],
                escape(m["stop_reason"] or ""),
                str(m["spend"]["tokens"]),
                f"{m['spend']['cost_usd']:.4f}" if m["spend"]["priced"] else "unpriced",
            ]
        )
    print_rows(
        console,
        f"solver sweep (band {sweep['band'][0]:.0%}-{sweep['band'][1]:.0%})",
        ["model", "n", "pass@1 \\[CI]", "pass@k", "infra", "band", "stop", "tokens", "USD"],
        rows,
        ("model",),
    )
    if sweep.get("budget_stop"):
        console.print(f"[yellow]{escape(sweep['budget_stop'])}[/]")
    imported = sweep.get("imported") or {}
    for p in imported.get("problems") or []:  # --trials-from: every file that could not be read, by name
        lost = " (trial counted unreadable)" if p.get("lost_trial") else ""
        console.print(f"[yellow]could not read[/] {escape(p['path'])}: {escape(p['message'])}{lost}", soft_wrap=True)
