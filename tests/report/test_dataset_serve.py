"""`qa serve` lists dataset runs beside the runs and serves each dataset's report: the real CLI and uvicorn over
a QA home holding a dataset of real run reports (tests/report/fake_dataset.py), recorded through the store's
dataset methods as `qa run PATH...` records it."""

from __future__ import annotations

import json
import re

import pytest

from envqa.app.dataset_models import DatasetReport
from envqa.store.db import Store

from .fake_dataset import DATASET_ID, fake_dataset, sqlite_env, summarize
from .test_serve_reports import fetch, serving


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return fake_dataset(tmp_path_factory)


@pytest.fixture(scope="module")
def server(ds, tmp_path_factory):
    with serving(sqlite_env(ds.home), tmp_path_factory.mktemp("serve")) as base:
        yield base


def page_data(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="qa-data">(.*?)</script>', html, re.S)[1])


@pytest.mark.fast
def test_the_index_lists_datasets_beside_runs(server, ds):
    status, body = fetch(server + "/")
    assert status == 200
    assert f'<tr data-dataset="{DATASET_ID}">' in body
    assert f'<a href="/datasets/{DATASET_ID}/report.html">{DATASET_ID}</a>' in body
    row = body.split(f'<tr data-dataset="{DATASET_ID}">')[1].split("</tr>")[0]
    assert "finished" in row and f"<td>{ds.report.exit_code}</td>" in row and "<td>5</td>" in row
    for r in ds.report.tasks:  # the runs are still listed
        if r.run_id:
            assert f'<tr data-run="{r.run_id}">' in body


@pytest.mark.fast
def test_a_dataset_report_is_served_and_its_task_links_land_on_run_reports(server, ds):
    status, body = fetch(server + f"/datasets/{DATASET_ID}/report.html")
    assert status == 200
    data = page_data(body)
    assert (
        DatasetReport.model_validate({k: v for k, v in data.items() if k in DatasetReport.model_fields}).tasks
        == ds.report.tasks
    )
    links = [t["link"] for t in data["tasks"] if t["link"]]
    assert len(links) == 4
    for link in links:  # relative to /datasets/<id>/report.html
        assert link.startswith("../../runs/")
        status, run_page = fetch(server + "/" + link.removeprefix("../../"))
        assert status == 200 and 'id="qa-data"' in run_page, link
    assert fetch(server + "/datasets/ds-none/report.html")[0] == 404
    assert fetch(server + "/datasets/..%2F..%2Fetc/report.html")[0] == 404


@pytest.mark.fast
def test_a_running_dataset_shows_its_rows_so_far_and_the_page_follows_the_store(server, ds, monkeypatch):
    """Before the dataset's report exists the page is built from its finished rows (the rest: not run yet);
    once the dataset finishes, the next request serves the stored report."""
    monkeypatch.delenv("QA_STORE_URL", raising=False)  # the store `qa serve` reads: the fake dataset's SQLite
    done = ds.report.tasks[0]
    store = Store(ds.config.db_path)
    try:
        store.create_dataset("ds-running", ["tasks"], {}, "{}")
        store.add_dataset_tasks("ds-running", [(done.path, done.name), ("tasks/later", "later")])
        store.link_dataset_run("ds-running", done.path, done.run_id)
        store.set_dataset_task("ds-running", done.path, "done", done.model_dump(mode="json"))
    finally:
        store.close()
    status, body = fetch(server + "/datasets/ds-running/report.html")
    data = page_data(body)
    assert status == 200 and [t["verdict"] for t in data["tasks"]] == [done.verdict, None]
    assert data["summary"]["by_verdict"] == {done.verdict: 1, "not run yet": 1}
    assert '<tr data-dataset="ds-running">' in fetch(server + "/")[1]

    final = summarize("ds-running", ["tasks"], [done, ds.report.tasks[1]], 2.0)
    store = Store(ds.config.db_path)
    try:
        store.finish_dataset("ds-running", "finished", final.model_dump(mode="json"))
    finally:
        store.close()
    data = page_data(fetch(server + "/datasets/ds-running/report.html")[1])
    assert [t["name"] for t in data["tasks"]] == [done.name, ds.report.tasks[1].name]
    assert data["exit_code"] == final.exit_code


def test_the_served_dataset_page_renders_in_chromium(server, page):
    page.goto(server + "/")
    page.click(f"#datasets tr[data-dataset='{DATASET_ID}'] a")
    page.wait_for_selector("html[data-ready='1']", timeout=15000)
    assert page.locator("#triage tr.task-row").count() == 5
    page.click("#triage tr.task-row[data-task='tasks/always-pass'] a.report-link")
    page.wait_for_selector("html[data-ready='1']", timeout=15000)
    assert page.url == server + "/runs/run-always-pass/report.html"
    assert page.errors == []
