"""`qa run PATH... --format markdown|github`: a dataset run as a pull-request comment, and as workflow annotations.

markdown: one table row per task (verdict, top finding, pass@1 against the band, proposal state, exit code), then
per task with something to say its findings, each with its evidence folded in <details>, and its proposals with
the diff folded. A PR comment holds at most 65,536 characters, so the folded parts stop at a budget and say what
was left out (every row of the table is always there; the dataset's HTML report has the rest).

github: GitHub Actions workflow commands first (`::error file=…,line=…,title=…::message`; `::warning` for a
warning, `::notice` for info) at each finding's location, the file relative to the repository (the task's path +
the finding's file), escaped as the runner expects (%25 %0D %0A in the message, and %3A %2C in properties too);
then the markdown between `::stop-commands::` markers, so that nothing an agent wrote into the evidence can be
read by the runner as a workflow command.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Literal

from envqa.app.dataset_models import DatasetConvention, DatasetReport, TaskFinding, TaskRow
from envqa.app.dataset_rows import FIXED, proposal_state, top_finding
from envqa.core.defaults import CI_BUDGET as BUDGET
from envqa.core.defaults import CI_EVIDENCE_LINES as EVIDENCE_LINES
from envqa.core.verdicts import Verdict

COMMENT_LIMIT = 65_536  # GitHub's limit on a comment body
ANNOTATION = {"critical": "error", "error": "error", "warning": "warning", "info": "notice"}
ICON = {
    Verdict.CLEAN: "✅",
    Verdict.FINDINGS: "❌",
    Verdict.OUT_OF_BAND: "⚠️",
    Verdict.AWAITING_APPROVAL: "⏸️",
    Verdict.INCOMPLETE: "⛔",
    Verdict.INVALID: "⛔",
}


# --- markdown --------------------------------------------------------------------------------------------


def cell(text: object) -> str:
    """Text safe in one table cell: no pipe or newline breaks the row, nothing is read as HTML."""
    s = " ".join(str(text if text is not None else "").split())
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def fenced(text: str, lang: str = "") -> str:
    """A code block whose fence is longer than any backtick run inside it (so evidence cannot close it)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def folded(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def pass_cell(row: TaskRow) -> str:
    if row.pass_at_1 is None:
        return "—"
    band = f" ({row.band[0]:g}–{row.band[1]:g})" if row.band else ""
    mark = "" if row.in_band is None else (" in band" if row.in_band else " out of band")
    return f"{row.pass_at_1:.2f}{band}{mark}"


def finding_cell(row: TaskRow) -> str:
    if row.error:
        return cell(row.error[:120])
    f = top_finding(row)
    if f is None:
        return ""
    more = f" +{len(row.findings) - 1}" if len(row.findings) > 1 else ""
    return f"`{cell(f.rule)}` ({cell(f.severity or '?')}){more}"


def table(report: DatasetReport) -> list[str]:
    lines = ["| task | verdict | top finding | pass@1 (band) | proposal | exit |", "|---|---|---|---|---|---|"]
    for r in report.tasks:
        lines.append(
            f"| `{cell(r.name)}` | {ICON.get(r.verdict or '', '')} {cell(r.verdict or 'not run')} | "
            f"{finding_cell(r)} | {pass_cell(r)} | {cell(proposal_state(r))} | {r.exit_code} |"
        )
    return lines


def where(f: TaskFinding) -> str:
    if not f.file:
        return ""
    return f" `{cell(f.file)}{f':{f.line}' if f.line else ''}`"


def finding_block(f: TaskFinding) -> str:
    head = (
        f"- **{cell(f.rule)}** ({cell(', '.join(x for x in (f.label, f.severity) if x))}){where(f)}: {cell(f.summary)}"
    )
    if not f.evidence.strip():
        return head
    lines = f.evidence.splitlines()
    body = "\n".join(lines[:EVIDENCE_LINES]) + (
        f"\n… {len(lines) - EVIDENCE_LINES} more line(s)" if len(lines) > EVIDENCE_LINES else ""
    )
    return head + "\n\n" + indent(folded("evidence", fenced(body)))


def indent(text: str) -> str:
    return "\n".join(("  " + ln) if ln else ln for ln in text.splitlines())


def task_section(r: TaskRow) -> str | None:
    if not (r.findings or r.proposals or r.error):
        return None
    out = [
        f"### {ICON.get(r.verdict or '', '')} {cell(r.name)}: {cell(r.verdict or 'not run')}",
        f"`{cell(repo_path(r.path, None, Path.cwd()))}`" + (f" · run `{cell(r.run_id)}`" if r.run_id else ""),
    ]
    if r.error:
        out.append(fenced(r.error))
    if r.findings:
        out += ["", "**Findings**", ""] + [finding_block(f) for f in r.findings]
    if r.agents:  # issue 33: pass@1 per agent/model, qa's own and imported
        out += ["", "| agent/model | pass@1 [95% CI] | source |", "|---|---|---|"] + [
            f"| {cell(m)} | {a['passes']}/{a['n']} [{a['ci_low']:.2f}, {a['ci_high']:.2f}] | {a['source']} |"
            for m, a in r.agents.items()
            if a.get("n")
        ]
    for p in r.proposals:
        head = (
            f"**Proposal** {cell(p.version[:12]) if p.version else ''} by `{cell(p.proposer or '?')}`"
            f" for {', '.join(f'`{cell(a)}`' for a in p.addresses) or 'the band'}: gate {cell(p.gate or 'not run')},"
            f" {cell(p.state or 'proposed')}" + (f" (approved by {cell(p.approved_by)})" if p.approved_by else "")
        )
        out += ["", head]
        if p.diff.strip():
            out += ["", folded(f"diff ({len(p.diff.splitlines())} lines)", fenced(p.diff, "diff"))]
    return "\n".join(out)


def example(c: DatasetConvention) -> str:
    return f"; e.g. {cell(c.example.summary[:300])}" if c.example else ""


def markdown(report: DatasetReport) -> str:
    s = report.summary
    verdicts = ", ".join(f"{n} {v}" for v, n in sorted(s.by_verdict.items(), key=lambda kv: (-kv[1], kv[0])))
    rules = ", ".join(f"`{cell(k)}` ({n})" for k, n in sorted(s.by_rule.items(), key=lambda kv: (-kv[1], kv[0])))
    head = [
        f"## qa: {s.tasks} task(s), exit {report.exit_code}",
        f"Dataset run `{cell(report.dataset_run_id)}`" + (f" · {s.seconds:.0f}s" if s.seconds is not None else ""),
        "",
        f"**Verdicts:** {verdicts or 'none'}",
        "",
    ]
    if rules:
        head += [f"**Rules fired (tasks):** {rules}", ""]
    if report.conventions:  # said once, not on each task (app/dataset_conventions.py)
        head += ["**Conventions of this dataset** (left out of each task's findings below):", ""]
        head += [f"- `{cell(c.rule)}` ({c.severity}): {cell(c.summary)}" + example(c) for c in report.conventions]
        head += [""]
    parts = ["\n".join(head + table(report))]
    used, left_out = len(parts[0]), []
    for r in report.tasks:
        section = task_section(r)
        if section is None:
            continue
        if used + len(section) > BUDGET:
            left_out.append(r.name)
            continue
        parts.append(section)
        used += len(section) + 2
    if left_out:
        parts.append(
            f"_Details of {len(left_out)} task(s) left out to fit a comment: {cell(', '.join(left_out))}; "
            "see the dataset report._"
        )
    text = "\n\n".join(parts) + "\n"
    return text[:COMMENT_LIMIT]


# --- github annotations ----------------------------------------------------------------------------------


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def repo_path(task_path: str, file: str | None, root: Path) -> str:
    """The annotated file relative to the repository root (`root`, the job's working directory)."""
    p = Path(task_path)
    try:
        p = p.resolve().relative_to(root.resolve()) if p.is_absolute() or ".." in p.parts else p
    except ValueError:
        pass  # outside the checkout: the runner shows it in the summary, not on a line
    full = p / file if file else p
    return full.as_posix().removeprefix("./")


def command(kind: str, message: str, **props: object) -> str:
    given = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items() if v not in (None, ""))
    return f"::{kind}{' ' + given if given else ''}::{escape_data(message)}"


def annotations(report: DatasetReport, root: Path) -> list[str]:
    out = []
    for r in report.tasks:
        if r.error:
            out.append(
                command(
                    "error", r.error, file=repo_path(r.path, None, root), title=f"qa: {r.name} {r.verdict or 'not run'}"
                )
            )
        for f in r.findings:
            fixed = f.summary.startswith(FIXED)
            message = f.summary + (f" (qa run {r.run_id})" if r.run_id else "")
            out.append(
                command(
                    ANNOTATION.get(f.severity or "", "warning"),
                    message,
                    file=repo_path(r.path, f.file, root),
                    line=f.line,
                    title=f"qa {f.rule}" + (" (a fix was proposed)" if fixed else ""),
                )
            )
    return out


def render(report: DatasetReport, fmt: Literal["markdown", "github"], *, root: Path | None = None) -> str:
    """The dataset run as `fmt`; `root` is the folder annotation paths are relative to (default: the cwd)."""
    if fmt == "markdown":
        return markdown(report)
    if fmt == "github":
        token = secrets.token_hex(16)
        lines = annotations(report, Path(root or os.getcwd()))
        return "\n".join([*lines, f"::stop-commands::{token}", markdown(report).rstrip("\n"), f"::{token}::"]) + "\n"
    raise ValueError(f"unknown format {fmt!r}: markdown or github")
