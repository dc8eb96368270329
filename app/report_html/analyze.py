"""The `qa analyze` document as one self-contained HTML page (issue 33): what `qa analyze --json` says, for a
person. Rendered on the server by Jinja with autoescaping, so nothing a harness or an agent wrote (evidence,
failure messages, paths) becomes markup; the page needs no JavaScript. The Harbor job plugin writes it into the
job folder; `qa analyze --html PATH` writes it anywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from envqa.app.report_html import HERE, jinja_env, script_json
from envqa.core.layout import write_atomic


def heat_map(doc: dict) -> dict:
    """Tasks x agent/model pass@1 (the doc's order: flagged tasks first, worst first)."""
    groups = sorted({g for t in doc["tasks"] for g in t["agents"]})
    rows = []
    for t in doc["tasks"]:
        top = next((f["severity"] for f in t["findings"] if f["severity"] != "info"), None)
        cells = []
        for g in groups:
            r = t["agents"].get(g)
            if not r or not r.get("n"):
                cells.append(None)
                continue
            rate = r["passes"] / r["n"]
            cells.append({"rate": rate, "hue": int(rate * 120), "passes": r["passes"], "n": r["n"]})
        rows.append({"task": t["task"], "flagged": top, "cells": cells})
    return {"groups": groups, "rows": rows}


def failure_shares(t: dict) -> list[dict]:
    """Per test, the share of the task's failed trials (in the pool) that failed it, largest first."""
    failed = t["pooled"]["n"] - t["pooled"]["passes"]
    by_test: dict[str, int] = {}
    for r in t["tests"]:
        by_test[r["test"]] = by_test.get(r["test"], 0) + r["failures"]
    if not failed:
        return []
    rows = [
        {"test": test, "failures": n, "failed": failed, "share": min(1.0, n / failed)}
        for test, n in by_test.items()
        if n
    ]
    return sorted(rows, key=lambda r: -r["share"])[:12]


def render_analyze_html(doc: dict) -> str:
    title = f"qa analyze — {len(doc['tasks'])} task(s), {doc['trials']} trials"
    return (
        jinja_env()
        .get_template("analyze.html.j2")
        .render(
            title=title,
            doc=doc,
            heat=heat_map(doc),
            shares={t["task"]: failure_shares(t) for t in doc["tasks"]},
            css=(HERE / "report.css").read_text(),
            generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            data=script_json(doc),
        )
    )


def write_analyze_html(doc: dict, dest: Path) -> Path:
    write_atomic(dest, render_analyze_html(doc))
    return dest
