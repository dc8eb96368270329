"""The dataset report: one self-contained HTML file per dataset run, `<home>/datasets/<dataset_run_id>/report.html`.

Same rules as the run report (app/report_html/__init__.py): everything inlined, no CDN, no library; the page
draws itself from one JSON object with plain JS (dataset.js) and text always goes in via textContent. It is the
triage view of a DatasetReport: a table of tasks (verdict, top finding, pass@1 against the band, proposal state,
exit code) that sorts and filters, the number of tasks each rule fired on (what breaks most tasks), and a link to
each task's own report, relative to this file so that the pair can be moved, archived or served together.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from envqa.app.dataset_conventions import lift_conventions
from envqa.app.dataset_models import DatasetReport, TaskRow, dataset_exit_code, summarize
from envqa.app.dataset_rows import FIXED, proposal_state, top_finding
from envqa.app.report_html import HERE, jinja_env, script_json
from envqa.core.config import QAConfig
from envqa.core.errors import InputError
from envqa.core.layout import write_atomic
from envqa.core.statuses import DatasetTaskStatus

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def dataset_report_path(config: QAConfig, dataset_run_id: str) -> Path:
    if not SAFE_ID.match(dataset_run_id or ""):
        raise InputError("dataset_run_id", f"{dataset_run_id!r} is not a dataset run id (letters, digits, . _ -)")
    return Path(config.home) / "datasets" / dataset_run_id / "report.html"


def task_link(row: TaskRow, page: Path, runs_dir: Path) -> str | None:
    """The task's own report as a link from `page`: relative when it is a local file, as given when it is a URL,
    and the run's usual report path when the row names a run whose report exists there."""
    target = row.report_html
    if target and "://" in target:
        return target
    if not target and row.run_id and (runs_dir / row.run_id / "report.html").is_file():
        target = str(runs_dir / row.run_id / "report.html")
    if not target:
        return None
    try:
        return Path(os.path.relpath(Path(target).resolve(), page.parent.resolve())).as_posix()
    except ValueError:  # another drive (Windows): no relative path exists
        return Path(target).resolve().as_uri()


def row_view(row: TaskRow, page: Path, runs_dir: Path) -> dict:
    top = top_finding(row)
    return {
        **row.model_dump(mode="json"),
        "link": task_link(row, page, runs_dir),
        "top": top.model_dump(mode="json") if top else None,
        "proposal_state": proposal_state(row),
        "rules": sorted({f.rule for f in row.findings}),
        "open_rules": sorted({f.rule for f in row.findings if not f.summary.startswith(FIXED)}),
    }


def render_dataset_report(report: DatasetReport, page: Path, runs_dir: Path) -> str:
    """The page's HTML (no I/O besides checking which run reports exist)."""
    view = {
        **report.model_dump(mode="json", exclude={"tasks"}),
        "tasks": [row_view(r, page, runs_dir) for r in report.tasks],
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "fixed_prefix": FIXED,
    }
    return (
        jinja_env()
        .get_template("dataset.html.j2")
        .render(
            title=f"qa dataset {report.dataset_run_id} — {report.summary.tasks} task(s), exit {report.exit_code}",
            css=(HERE / "report.css").read_text() + (HERE / "dataset.css").read_text(),
            js=(HERE / "dom.js").read_text() + (HERE / "dataset.js").read_text(),
            data=script_json(view),
        )
    )


def write_dataset_report(config: QAConfig, report: DatasetReport) -> Path:
    """Write `<home>/datasets/<dataset_run_id>/report.html` (atomically) and return its path."""
    out = dataset_report_path(config, report.dataset_run_id)
    write_atomic(out, render_dataset_report(report, out, Path(config.runs_dir)))
    return out


def dataset_from_store(store, dataset_id: str) -> DatasetReport | None:
    """The dataset's report as stored; while it runs (no report yet), one built from the rows finished so far,
    the others shown as not run yet. None when the store has no such dataset."""
    stored = store.dataset_report(dataset_id)
    if stored is not None:
        return DatasetReport.model_validate(stored)
    ds = store.get_dataset(dataset_id)
    if ds is None:
        return None
    rows = [
        TaskRow.model_validate(t["row"])
        if t.get("row")
        else TaskRow(
            path=t["path"],
            name=t["name"],
            run_id=t.get("run_id"),
            verdict=None,
            exit_code=3,
            error=None
            if t.get("status") in (DatasetTaskStatus.PENDING, DatasetTaskStatus.RUNNING)
            else f"task {t.get('status')}",
        )
        for t in store.dataset_tasks(dataset_id)
    ]
    shown, conventions = lift_conventions(rows)
    return DatasetReport(
        dataset_run_id=dataset_id,
        paths=ds.get("paths") or [],
        tasks=shown,
        conventions=conventions,
        summary=summarize(rows, unrun="not run yet"),
        exit_code=dataset_exit_code(rows) if rows else 3,
    )


__all__ = ["dataset_from_store", "dataset_report_path", "render_dataset_report", "write_dataset_report"]
