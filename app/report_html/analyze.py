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


def render_analyze_html(doc: dict) -> str:
    title = f"qa analyze — {len(doc['tasks'])} task(s), {doc['trials']} trials"
    return (
        jinja_env()
        .get_template("analyze.html.j2")
        .render(
            title=title,
            doc=doc,
            css=(HERE / "report.css").read_text(),
            generated_at=datetime.now(UTC).isoformat(timespec="seconds"),
            data=script_json(doc),
        )
    )


def write_analyze_html(doc: dict, dest: Path) -> Path:
    write_atomic(dest, render_analyze_html(doc))
    return dest
