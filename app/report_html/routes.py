"""`qa serve`'s report routes: the run list at `/` and each run's HTML report.

A report is rebuilt when it is missing or older than its report.json (a run that moved on since), so
the page served is never stale; building happens in a worker thread, off the event loop.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from envqa.app.report_html import jinja_env, report_json_path, write_html_report

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def list_runs(runs_dir: Path) -> list[dict]:
    """Every run directory, newest first, with what its report.json says (if it has one yet)."""
    rows = []
    if not runs_dir.is_dir():
        return rows
    for d in runs_dir.iterdir():
        if not d.is_dir() or not RUN_ID.match(d.name):
            continue
        src = d / "report.json"
        row = {"run_id": d.name, "has_report": src.is_file(), "env": "", "verdict": "running", "trials": "",
               "stop_reason": "", "mtime": (src if src.is_file() else d).stat().st_mtime}
        if row["has_report"]:
            try:
                report = json.loads(src.read_text())
                row.update(env=(report.get("environment") or {}).get("name") or "", verdict=report.get("verdict") or "",
                           trials=len(report.get("trials") or []), stop_reason=report.get("stop_reason") or "")
            except ValueError:
                row["verdict"] = "unreadable report.json"
        row["when"] = datetime.fromtimestamp(row["mtime"], timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        rows.append(row)
    return sorted(rows, key=lambda r: r["mtime"], reverse=True)


def report_routes(config) -> list[Route]:
    runs_dir = Path(config.runs_dir)

    async def index(request: Request) -> Response:
        runs = await run_in_threadpool(list_runs, runs_dir)
        return HTMLResponse(jinja_env().get_template("runs.html.j2").render(runs=runs, runs_dir=str(runs_dir)))

    def fresh_report(run_id: str) -> Path | None:
        src = report_json_path(config, run_id)
        if not src.is_file():
            return None
        html = src.parent / "report.html"
        if not html.is_file() or html.stat().st_mtime < src.stat().st_mtime:
            write_html_report(config, run_id)
        return html

    async def report_html(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if not RUN_ID.match(run_id):
            return PlainTextResponse("no such run", status_code=404)
        html = await run_in_threadpool(fresh_report, run_id)
        if html is None:
            return PlainTextResponse(f"run {run_id} has no report yet", status_code=404)
        return FileResponse(html, media_type="text/html; charset=utf-8")

    async def report_json(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        src = report_json_path(config, run_id) if RUN_ID.match(run_id) else None
        if src is None or not src.is_file():
            return PlainTextResponse("no such report", status_code=404)
        return FileResponse(src, media_type="application/json")

    return [Route("/", index), Route("/runs/{run_id}/report.html", report_html),
            Route("/runs/{run_id}/report.json", report_json)]
