"""What `qa analyze` prints: text tables (rich), markdown (a pull-request comment) and github (annotations, then
the markdown between stop-commands markers), from the one document app/analyze.py builds.

Per task: the verdict, pooled pass@1 against the band, pass@1 per agent/model with its Wilson interval, the
findings with their evidence, each failed trial's cause (with --tasks), and the per-test table (test x agent:
failures and fails-alone counts). Text an agent or a harness wrote (evidence, messages) is escaped for the medium:
no rich markup, no table-breaking pipe, no workflow command.
"""

from __future__ import annotations

import secrets

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from envqa.app.ci_output import ANNOTATION, ICON, cell, command, fenced, folded
from envqa.core.defaults import ANALYZE_BUDGET as BUDGET


def rate(r: dict) -> str:
    if not r.get("n"):
        return "—"
    return f"{r['passes']}/{r['n']} = {r['pass_at_1']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]"


def _alone_rows(t: dict) -> list[dict]:
    return [row for row in t["tests"] if row["failures"]]


# --- text ------------------------------------------------------------------------------------------------


def _look_first_lines(doc: dict) -> list[str]:
    """One line per flagged task, worst first: severity, task, rule, the evidence line, the trials to open."""
    out = []
    for i, t in enumerate(doc.get("look_first", []), 1):
        trials = ", ".join(t["trials"]) or "-"
        out.append(f"{i}. [{t['severity']}] {t['task']}: {t['rule']}: {t['evidence']} (open: {trials})")
    return out


def _no_pass_lines(doc: dict) -> list[str]:
    """One line per task no setup solved honestly, with its kind (probes/cross_trial/no_pass.py) and evidence."""
    return [
        f"{r['task']}: {r['kind']}: {r['evidence'][:300]} (open: {', '.join(r['trials'][:3]) or '-'})"
        for r in doc.get("no_pass", [])
    ]


def _panel_line(doc: dict) -> str | None:
    p = doc.get("panel")
    if not p or not p.get("setups"):
        return None
    quiet = p["quiet_short_of_evidence"]
    eg = f", e.g. {', '.join(p['examples'][:3])}" if quiet else ""
    return (
        f"panel: {p['setups']} setup(s), up to {p['trials_per_task']} trial(s) per task; {quiet} quiet task(s) where a "
        f"rule lacked evidence (the task's coverage lines say how much){eg}"
    )


def _reading_lines(doc: dict) -> list[str]:
    """What was read: trials, unreadable trials, groups and where their names came from, agents that never ran."""
    lines = [
        f"{doc['trials']} trials read, {doc.get('unreadable_trials', 0)} unreadable, {len(doc['problems'])} file(s) not read"
    ]
    for g in doc.get("groups", []):
        lines.append(f"group {g['group']}: {g['trials']} trials ({_named_by(g)})")
    panel = _panel_line(doc)
    if panel:
        lines.append(panel)
    for j in doc.get("jobs", []):
        if j.get("unfinished") or j.get("n_retries") or j.get("n_cancelled_trials"):
            lines.append(f"job {j['label']}: {_job_counts(j)}")
    for n in doc.get("never_ran", []):
        lines.append(
            f"never ran (infra, out of pass rates): {n['group']} in {n['trials']} trial(s), e.g. {', '.join(n['examples'])}"
        )
    return lines


def _named_by(g: dict) -> str:
    """Which rule named the group, and where its names came from."""
    agent = f"agent from {g['agent_from'] or 'the record'}"
    if g.get("rule") == "job folder":
        return f"job folder {g.get('job')}: no model recorded; {agent}"
    return f"{g.get('named_by') or 'agent+model'}; {agent}, model from {g['model_from'] or 'nowhere (none recorded)'}"


def _job_counts(j: dict) -> str:
    """Harbor's own counts for a job that had not finished, retried or cancelled (said: its rates are partial)."""
    names = ("completed", "errored", "running", "pending", "cancelled")
    parts = [f"{j[f'n_{n}_trials']} {n}" for n in names if j.get(f"n_{n}_trials") is not None]
    if j.get("n_retries"):
        parts.append(f"retried {j['n_retries']}")
    total = f" ({j['n_total_trials']} trials)" if j.get("n_total_trials") is not None else ""
    note = " (not finished: pass rates count the trials written so far)" if j.get("unfinished") else ""
    return f"Harbor's counts{total}: {', '.join(parts)}{note}"


def print_text(doc: dict, console: Console) -> None:
    lo, hi = doc["band"]
    first = _look_first_lines(doc)
    if first:
        console.print("[bold]Look at these first[/]")
        for line in first:
            console.print(f"  {escape(line)}", soft_wrap=True, highlight=False)
    no_pass = _no_pass_lines(doc)
    if no_pass:
        console.print(f"[bold]No setup solved these ({len(no_pass)}), by cause[/]")
        for line in no_pass:
            console.print(f"  {escape(line)}", soft_wrap=True, highlight=False)
    for line in _reading_lines(doc):
        console.print(escape(line), soft_wrap=True, highlight=False)
    summary = Table(
        title=f"qa analyze: {doc['trials']} trials, {len(doc['tasks'])} tasks, band {lo:g}-{hi:g}", box=box.SIMPLE_HEAD
    )
    for col in ("task", "verdict", "pooled pass@1 [95% CI]", "findings"):
        summary.add_column(col)
    for t in doc["tasks"]:
        rules = ", ".join(f"{f['rule']} ({f['severity']})" for f in t["findings"]) or "-"
        summary.add_row(escape(t["task"]), t["verdict"], rate(t["pooled"]), escape(rules))
    console.print(summary)
    for t in doc["tasks"]:
        _print_task(t, console)
    for p in doc["problems"]:
        console.print(f"[yellow]could not read[/] {escape(p['path'])}: {escape(p['message'])}", soft_wrap=True)
    for name, n in sorted(doc["unmatched"].items()):
        console.print(f"[yellow]no task named[/] {escape(name)} in --tasks: {n} trial(s) left out")
    for note in doc["stale_notes"]:
        console.print(f"[yellow]stale:[/] {escape(note)}", soft_wrap=True)
    console.print(f"exit {doc['exit_code']}")


def _print_task(t: dict, console: Console) -> None:
    if not t["findings"] and t["verdict"] == "clean":
        return
    agents = Table(title=f"{t['task']}: pass@1 per agent/model", box=box.MINIMAL)
    for col in ("agent/model", "pass@1 [CI]", "call", "infra"):
        agents.add_column(col)
    for name, r in t["agents"].items():
        agents.add_row(
            escape(name),
            rate(r),
            r["call"] if r["in_pool"] else "not in pool",
            f"{r['infra']} {', '.join(r['infra_classes'])}".strip(),
        )
    console.print(agents)
    for f in t["findings"]:
        console.print(f"  [bold]{f['rule']}[/] ({f['severity']}): {escape(f['message'])}", soft_wrap=True)
        for e in f["evidence"][:4]:
            console.print(f"      {escape(e.splitlines()[0][:300] if e else e)}", soft_wrap=True, highlight=False)
    for x in t.get("failures") or []:
        line = f"failed trial {x['trial']} ({x['group']}): {x['kind']}: {x['why']}"
        console.print(f"  {escape(line)}", soft_wrap=True, highlight=False)
    for line in t.get("coverage", []):
        console.print(f"  [dim]short of evidence:[/] {escape(line)}", soft_wrap=True, highlight=False)
    rows = _alone_rows(t)
    if rows:
        tests = Table(title=f"{t['task']}: failures per test", box=box.MINIMAL)
        for col in ("test", "agent/model", "failed", "fails alone", "trials"):
            tests.add_column(col)
        for r in rows:
            tests.add_row(
                escape(r["test"]), escape(r["agent"]), str(r["failures"]), str(r["fails_alone"]), str(r["trials"])
            )
        console.print(tests)


# --- markdown --------------------------------------------------------------------------------------------


def markdown(doc: dict) -> str:
    lo, hi = doc["band"]
    lines = [f"### qa analyze: {doc['trials']} trials, {len(doc['tasks'])} tasks (band {lo:g}–{hi:g})", ""]
    first = _look_first_lines(doc)
    if first:
        lines += ["**Look at these first**", ""] + [cell(line) for line in first] + [""]
    no_pass = _no_pass_lines(doc)
    if no_pass:
        lines += (
            [f"**No setup solved these ({len(no_pass)}), by cause**", ""] + [f"- {cell(x)}" for x in no_pass] + [""]
        )
    lines += [f"- {cell(line)}" for line in _reading_lines(doc)] + [""]
    lines += ["| task | verdict | pooled pass@1 [95% CI] | findings |", "|---|---|---|---|"]
    for t in doc["tasks"]:
        rules = ", ".join(f"`{f['rule']}` ({f['severity']})" for f in t["findings"]) or ""
        lines.append(
            f"| {cell(t['task'])} | {ICON.get(t['verdict'], '')} {t['verdict']} | {rate(t['pooled'])} | {rules} |"
        )
    used = 0
    for t in doc["tasks"]:
        section = _task_markdown(t)
        if section is None:
            continue
        if used + len(section) > BUDGET:
            lines += ["", f"_{t['task']} and later tasks left out (comment size); see `qa analyze --json`._"]
            break
        used += len(section)
        lines += ["", section]
    if doc["problems"]:
        lines += ["", "**Could not read:**"] + [f"- `{cell(p['path'])}`: {cell(p['message'])}" for p in doc["problems"]]
    if doc["stale_notes"]:
        lines += ["", "**Stale trials:**"] + [f"- {cell(n)}" for n in doc["stale_notes"]]
    return "\n".join(lines) + "\n"


def _task_markdown(t: dict) -> str | None:
    if not t["findings"] and t["verdict"] == "clean":
        return None
    out = [f"#### {cell(t['task'])}", "", "| agent/model | pass@1 [95% CI] | call | infra |", "|---|---|---|---|"]
    out += [
        f"| {cell(name)} | {rate(r)} | {r['call'] if r['in_pool'] else 'not in pool'} | {r['infra']} |"
        for name, r in t["agents"].items()
    ]
    for f in t["findings"]:
        out += [
            "",
            f"- **`{f['rule']}`** ({f['severity']}): {cell(f['message'])}",
            "  " + folded("evidence", fenced("\n".join(f["evidence"]))).replace("\n", "\n  "),
        ]
    out += [f"- short of evidence: {cell(line)}" for line in t.get("coverage", [])]
    rows = _alone_rows(t)
    if rows:
        out += ["", "| test | agent/model | failed | fails alone | trials |", "|---|---|---|---|---|"]
        out += [
            f"| {cell(r['test'])} | {cell(r['agent'])} | {r['failures']} | {r['fails_alone']} | {r['trials']} |"
            for r in rows
        ]
    return "\n".join(out)


def github(doc: dict) -> str:
    """Annotations first (at the task's folder when known), then the markdown fenced from the runner."""
    lines = []
    for t in doc["tasks"]:
        for f in t["findings"]:
            lines.append(
                command(
                    ANNOTATION.get(f["severity"], "warning"),
                    f["message"],
                    file=t.get("path"),
                    title=f"qa {f['rule']}: {t['task']}",
                )
            )
    for p in doc["problems"]:
        lines.append(command("error", p["message"], file=p["path"], title="qa analyze: could not read"))
    token = secrets.token_hex(8)
    return "\n".join([*lines, f"::stop-commands::{token}", markdown(doc).rstrip("\n"), f"::{token}::"]) + "\n"
