"""`qa serve`'s dataset routes: the datasets listed on `/` beside the runs, and each dataset's HTML report.

Read from the store (store/datasets.py: list_datasets, dataset_report, dataset_tasks), like the run routes. The
page is `<home>/datasets/<id>/report.html`, the same file `qa run PATH...` writes; it is rebuilt when missing,
older than the stored report, or while the dataset still runs (its finished rows so far). Its task links are
relative (`../../runs/<run_id>/report.html`), so they land on the run routes when served.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from envqa.app.report_html import report_store
from envqa.app.report_html.dataset import SAFE_ID, dataset_from_store, dataset_report_path, write_dataset_report
from envqa.core.defaults import REPORT_DATASETS_LISTED as LISTED


def list_datasets(config) -> list[dict]:
    """The store's dataset runs, newest first, with their summary counts once finished."""
    rows = []
    with report_store(config) as store:
        for d in store.list_datasets(LISTED) if store is not None else []:
            when = datetime.fromisoformat(d.get("report_at") or d.get("created_at"))
            counts = ", ".join(f"{n} {v}" for v, n in (d.get("by_verdict") or {}).items())
            rows.append(
                {
                    "dataset_id": d["dataset_id"],
                    "status": d.get("status") or "",
                    "exit_code": "" if d.get("exit_code") is None else d["exit_code"],
                    "tasks": d.get("tasks") if d.get("tasks") is not None else "",
                    "verdicts": counts,
                    "paths": ", ".join(d.get("paths") or []),
                    "when": when.strftime("%Y-%m-%d %H:%M UTC"),
                }
            )
    return rows


def fresh_dataset_page(config, dataset_id: str) -> Path | None:
    """The dataset's page, rebuilt when the store holds something newer; None when there is no such dataset."""
    with report_store(config) as store:
        ds = store.get_dataset(dataset_id) if store is not None else None
        if ds is None:
            return None
        page = dataset_report_path(config, dataset_id)
        changed = datetime.fromisoformat(ds["report_at"]).timestamp() if ds.get("report_at") else None
        if page.is_file() and changed is not None and page.stat().st_mtime >= changed:
            return page
        report = dataset_from_store(store, dataset_id)
    return write_dataset_report(config, report)


def dataset_routes(config) -> list[Route]:
    async def dataset_html(request: Request) -> Response:
        dataset_id = request.path_params["dataset_id"]
        page = await run_in_threadpool(fresh_dataset_page, config, dataset_id) if SAFE_ID.match(dataset_id) else None
        if page is None:
            return PlainTextResponse("no such dataset", status_code=404)
        return FileResponse(page, media_type="text/html; charset=utf-8")

    return [Route("/datasets/{dataset_id}/report.html", dataset_html)]
