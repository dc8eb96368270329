"""`qa show RUN_ID` in text: the story the HTML report draws, for a terminal.

Per version: pass@1 with its interval per model against the band, the label counts, the findings with
their first line of evidence; then spend per role and model, and where the HTML report is. Tables use the
terminal's full width and never split an id (version, model, rule): app/term.py, a list when narrow.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from envqa.app.report_html.data import spend_rows
from envqa.app.term import print_rows


def _rate(m: dict) -> str:
    if m.get("pass_at_1") is None:
        return "-"
    return f"{m['passes']}/{m['n']} = {m['pass_at_1']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]"


def _rates(report: dict) -> list[list[str]]:
    rows = []
    for v in report.get("versions") or []:
        band = v.get("band") or {}
        for model, m in (band.get("models") or {}).items():
            rows.append([v["version"][:12], model, _rate(m), m.get("call") or "-"])
        if band.get("pooled"):
            rows.append([v["version"][:12], "(pooled)", _rate(band["pooled"]), band.get("call") or "-"])
    return rows


def _labels(report: dict) -> list[list[str]]:
    """Per version and trial kind (the model for a solver, else the agent): label/subtype counts."""
    rows = []
    for v in report.get("versions") or []:
        counts: dict[str, dict[str, int]] = {}
        for t in v.get("trials") or []:
            label = t.get("label") or {}
            if label.get("label"):
                name = f"{label['label']}/{label['subtype']}" if label.get("subtype") else label["label"]
                by = counts.setdefault(t.get("model") or t.get("agent") or "?", {})
                by[name] = by.get(name, 0) + 1
        for who, c in counts.items():
            rows.append([v["version"][:12], who, ", ".join(f"{k} {n}" for k, n in sorted(c.items()))])
        for entry in (v.get("labels") or {}).get("consistent") or []:
            rows.append([v["version"][:12], "(the task's)", f"{entry['label']}: {entry.get('why', '')}"])
    return rows


def _findings(report: dict) -> list[list[str]]:
    rows = []
    for v in report.get("versions") or []:
        for f in v.get("findings") or []:
            if f.get("severity") == "info":
                continue
            first = next((line for e in f.get("evidence") or [] for line in str(e).splitlines() if line.strip()), "")
            rows.append(
                [
                    v["version"][:12],
                    f["rule"],
                    f.get("label", ""),
                    f"{f.get('message', '')}" + (f"\n  evidence: {first[:300]}" if first else ""),
                ]
            )
    return rows


def _spend(report: dict) -> list[list[str]]:
    """The HTML report's spend rows (app/report_html/data.spend_rows), as text."""
    versions = [{**v, "short": v["version"][:12]} for v in report.get("versions") or []]
    rows = []
    for r in spend_rows(versions, report, report.get("proposals") or []):
        tokens = r.get("tokens", (r.get("input_tokens") or 0) + (r.get("output_tokens") or 0))
        usd = "unpriced" if r.get("priced") is False else f"{r.get('cost_usd') or 0:.4f}"
        rows.append([r["role"], r["model"], r.get("version", ""), str(r.get("calls", "")), str(tokens), usd])
    return rows


def print_story(report: dict, console: Console, html: Path | None, decisions=None) -> None:
    """Everything after the versions table that `qa show` prints (app/cli/runs.py print_loop prints that):
    what was found, then `decisions(report, console)` (proposals, gates, approvals), then spend and the path."""
    for title, cols, rows, ids in (
        (
            "pass@1 per model and version (95% Wilson interval) against the band",
            ["version", "model", "pass@1", "call"],
            _rates(report),
            ("version", "model"),
        ),
        ("trial labels per version", ["version", "trials of", "labels"], _labels(report), ("version", "trials of")),
        ("findings per version", ["version", "rule", "label", "finding"], _findings(report), ("version", "rule")),
        ("", [], [], ()),  # the decisions go here: after what was found, before what it cost
        (
            "spend per role and model",
            ["role", "model", "version", "calls", "tokens", "usd"],
            _spend(report),
            ("model", "version"),
        ),
    ):
        if not title and decisions is not None:
            decisions(report, console)
        if rows:
            print_rows(console, title, cols, [[escape(c) for c in r] for r in rows], ids)
    if html is not None and html.exists():
        console.print(f"report: {html}", highlight=False, soft_wrap=True)
