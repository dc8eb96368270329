"""One self-contained HTML file per run: runs/<run_id>/report.html, readable offline.

All CSS, JS and data are inlined; there is no chart library (the charts are inline SVG drawn by
report.js). The page's summary data is plain JSON; each trial's trace is gzip+base64 and is
decompressed (DecompressionStream) and rendered only when the trial is opened, which keeps a 500-trial
report small and quick to show. `eager=True` embeds traces uncompressed and renders them all at load:
the benchmark's baseline, not something a user needs.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import structlog
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from envqa.app.report_html.data import build_view, store_extras
from envqa.core.errors import InputError
from envqa.core.layout import write_atomic
from envqa.store.db import Store
from envqa.store.postgres import store_exists

log = structlog.get_logger(__name__)
HERE = Path(__file__).parent


def jinja_env() -> Environment:
    return Environment(
        loader=FileSystemLoader(HERE), undefined=StrictUndefined, autoescape=select_autoescape(["html", "j2"])
    )


def script_json(value) -> str:
    """JSON safe inside <script>: no `</script>`, no `<!--`, no U+2028/9 line breaks."""
    text = json.dumps(value, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def pack(trace: dict) -> str:
    return base64.b64encode(gzip.compress(json.dumps(trace, separators=(",", ":")).encode(), 6)).decode()


def render_report(report: dict, run_dir: Path, *, extras: dict | None = None, eager: bool = False) -> str:
    """The page's HTML for a report dict (no I/O besides reading the run's artifacts)."""
    view, traces = build_view(report, run_dir, extras)
    view["generated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    view["eager"] = eager
    return (
        jinja_env()
        .get_template("template.html.j2")
        .render(
            title=f"qa report {report.get('run_id')} — {(report.get('environment') or {}).get('name') or ''}",
            css=(HERE / "report.css").read_text(),
            js=(HERE / "dom.js").read_text() + (HERE / "report.js").read_text() + (HERE / "cross_trial.js").read_text(),
            data=script_json(view),
            traces=script_json(traces if eager else {k: pack(v) for k, v in traces.items()}),
        )
    )


def report_json_path(config, run_id: str) -> Path:
    """Where the run's report is exported (graphs/loop_report writes it next to the store's copy); qa reads
    the store's copy, never this file."""
    return Path(config.runs_dir) / run_id / "report.json"


@contextmanager
def report_store(config) -> Iterator[Store | None]:
    """The store every report reader reads (runs.report_json, the trials' results), closed afterwards;
    None when there is no store yet (reading never creates one)."""
    if not store_exists(config.db_path):
        yield None
        return
    store = Store(config.db_path)
    try:
        yield store
    finally:
        store.close()


def write_html_report(config, run_id: str, dest: Path | None = None, *, eager: bool = False) -> Path:
    """Build runs/<run_id>/report.html (or `dest`) from the store's report and the trials' artifacts."""
    with report_store(config) as store:
        report = store.run_report(run_id) if store is not None else None
        if report is None:
            raise InputError(
                str(report_json_path(config, run_id)),
                f"no report for run {run_id!r} in the store (the run has not reached a report yet)",
            )
        extras = store_extras(store, run_id)
    run_dir = Path(config.runs_dir) / run_id
    html = render_report(report, run_dir, extras=extras, eager=eager)
    out = Path(dest) if dest else run_dir / "report.html"
    write_atomic(out, html)
    return out


def try_write_html_report(config, run_id: str) -> Path | None:
    """write_html_report for the runner: a report that cannot be drawn never fails the run."""
    try:
        with report_store(config) as store:
            if store is None or store.run_report(run_id) is None:
                return None
        return write_html_report(config, run_id)
    except Exception as e:  # noqa: BLE001 - logged; the run's result stands without its HTML view
        log.warning("report_html.failed", run_id=run_id, error=f"{type(e).__name__}: {e}")
        return None


__all__ = ["render_report", "try_write_html_report", "write_html_report"]
