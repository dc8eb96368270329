"""`qa serve`'s report routes: the run list at `/` (and the dataset runs, dataset_routes.py) and each run's HTML
report.

Everything comes from the store (runs.report_json), the same copy `qa runs` and `qa show` read. A page is
rebuilt when it is missing or older than the store's report (a run that moved on since), so the page
served is never stale; building happens in a worker thread, off the event loop.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from envqa.app.report_html import jinja_env, report_store, write_html_report
from envqa.app.report_html.dataset_routes import dataset_routes, list_datasets
from envqa.core.defaults import REPORT_RUNS_LISTED as LISTED

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def list_runs(config) -> list[dict]:
    """The store's runs, newest first, with what each one's report says (if it has one yet)."""
    rows = []
    with report_store(config) as store:
        for run in store.list_runs(LISTED) if store is not None else []:
            report = store.run_report(run["run_id"])
            when = store.report_time(run["run_id"]) or datetime.fromisoformat(run["created_at"])
            row = {
                "run_id": run["run_id"],
                "has_report": report is not None,
                "env": run["env_name"] or "",
                "verdict": "running",
                "trials": "",
                "stop_reason": "",
                "when": when.strftime("%Y-%m-%d %H:%M UTC"),
            }
            if report is not None:
                row.update(
                    env=(report.get("environment") or {}).get("name") or "",
                    verdict=report.get("verdict") or "",
                    trials=len(report.get("trials") or []),
                    stop_reason=report.get("stop_reason") or "",
                )
            rows.append(row)
    return rows


def report_routes(config) -> list[Route]:
    runs_dir = config.runs_dir

    async def index(request: Request) -> Response:
        runs = await run_in_threadpool(list_runs, config)
        datasets = await run_in_threadpool(list_datasets, config)  # issue 25: dataset runs beside the runs
        return HTMLResponse(
            jinja_env().get_template("runs.html.j2").render(runs=runs, runs_dir=str(runs_dir), datasets=datasets)
        )

    def fresh_report(run_id: str) -> Path | None:
        with report_store(config) as store:
            changed = store.report_time(run_id) if store is not None else None
        if changed is None:
            return None
        html = runs_dir / run_id / "report.html"
        if not html.is_file() or html.stat().st_mtime < changed.timestamp():
            write_html_report(config, run_id)
        return html

    def stored_report(run_id: str) -> dict | None:
        with report_store(config) as store:
            return store.run_report(run_id) if store is not None else None

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
        report = await run_in_threadpool(stored_report, run_id) if RUN_ID.match(run_id) else None
        if report is None:
            return PlainTextResponse("no such report", status_code=404)
        return JSONResponse(report)

    return [
        Route("/", index),
        Route("/runs/{run_id}/report.html", report_html),
        Route("/runs/{run_id}/report.json", report_json),
        *dataset_routes(config),
    ]
