"""The dataset report (app/report_html/dataset.py) in a real headless Chromium: a dataset of real run reports
(tests/report/fake_dataset.py, plus the Docker sweep's report for pass@1 against the band). The triage table sorts
and filters, each task links to its own report, the page makes no request outside its own file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from envqa.app.dataset_rows import task_row
from envqa.app.report_html.dataset import write_dataset_report
from qa_testkit import open_report

from .conftest import artifacts_dir, run_dir
from .fake_dataset import BROKEN, fake_dataset, summarize

SCREENSHOT = Path("/tmp/dataset_report.png")  # for the lead's note; a copy goes to the test artifacts


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return fake_dataset(tmp_path_factory)


@pytest.fixture
def opened(ds, page):
    """The fake dataset's report, written and opened; `page.requests` lists every URL the page asked for."""
    path = write_dataset_report(ds.config, ds.report)
    page.requests = []
    page.on("request", lambda r: page.requests.append(r.url))
    open_report(page, path)
    return path


def shown(page) -> list[str]:
    return page.locator("#triage tr.task-row").evaluate_all("rows => rows.map(r => r.dataset.task)")


def test_written_where_the_contract_says_self_contained(ds, opened, page):
    assert opened == ds.home / "datasets" / ds.report.dataset_run_id / "report.html"
    html = opened.read_text()
    assert "<script src" not in html and '<link rel="stylesheet"' not in html
    assert re.findall(r"https?://[^\s\"']*", html) == ["http://www.w3.org/2000/svg"]  # the SVG namespace, no URL
    assert page.locator("#triage tr.task-row").count() == len(ds.report.tasks) == 5
    assert page.inner_text("#exit-code") == f"exit {ds.report.exit_code}"
    for rule, n in ds.report.summary.by_rule.items():  # what breaks most tasks
        assert page.locator(f"#rule-counts tr[data-rule='{rule}'] td.num").inner_text() == str(n)
    assert all(u.startswith(("file://", "data:")) for u in page.requests), page.requests
    assert page.errors == []


def test_the_triage_table_sorts_by_any_column(ds, opened, page):
    by_path = {r.path: r for r in ds.report.tasks}
    first = shown(page)  # by verdict: findings first, clean last
    assert by_path[first[0]].verdict == "findings" and by_path[first[-1]].verdict == "clean"
    page.click("#triage th[data-sort='exit']")
    assert [by_path[p].exit_code for p in shown(page)] == sorted(r.exit_code for r in ds.report.tasks)
    assert page.get_attribute("#triage th[data-sort='exit']", "aria-sort") == "ascending"
    page.click("#triage th[data-sort='exit']")
    assert [by_path[p].exit_code for p in shown(page)] == sorted((r.exit_code for r in ds.report.tasks), reverse=True)
    page.click("#triage th[data-sort='task']")
    assert [by_path[p].name for p in shown(page)] == sorted(r.name for r in ds.report.tasks)
    assert page.errors == []


def test_the_triage_table_filters_by_verdict_rule_and_text(ds, opened, page):
    page.select_option("#f-verdict", "clean")
    assert sorted(shown(page)) == sorted(r.path for r in ds.report.tasks if r.verdict == "clean")
    assert page.inner_text("#shown") == "2 of 5 task(s) shown"
    page.select_option("#f-verdict", "")
    page.click("#rule-counts tr[data-rule='reward-written-unconditionally']")  # the rule table filters too
    with_rule = sorted(
        r.path for r in ds.report.tasks if any(f.rule == "reward-written-unconditionally" for f in r.findings)
    )
    assert sorted(shown(page)) == with_rule and len(with_rule) == 3
    assert page.input_value("#f-rule") == "reward-written-unconditionally"
    page.click("#rule-counts tr[data-rule='reward-written-unconditionally']")  # again: off
    assert len(shown(page)) == 5
    page.fill("#q", "waiting")
    assert shown(page) == ["tasks/always-pass-waiting"]
    page.fill("#q", BROKEN)
    assert shown(page) == [f"tasks/{BROKEN}"]
    assert "not an environment" in page.inner_text(f"#triage tr.task-row[data-task='tasks/{BROKEN}']")
    page.fill("#q", "")
    page.click(".counts .badge[data-verdict='awaiting_approval']")  # the verdict counts filter too
    assert shown(page) == ["tasks/always-pass-waiting"]
    assert page.errors == []


def test_each_task_links_to_its_own_report_and_details_open(ds, opened, page):
    links = page.locator("#triage a.report-link")
    assert links.count() == 4  # every task that ran; the malformed one has no report
    for i in range(links.count()):
        href = links.nth(i).get_attribute("href")
        assert href.startswith("../../runs/") and (opened.parent / href).resolve().is_file(), href
    waiting = ds.run_reports["always-pass-waiting"]
    page.click("#triage tr.task-row[data-task='tasks/always-pass-waiting'] button.open")
    detail = page.locator("#triage tr.detail-row[data-task='tasks/always-pass-waiting']")
    assert detail.is_visible()
    for f in waiting["findings"]:
        assert detail.locator(f".finding[data-rule='{f['rule']}']").count() == 1
    diff = waiting["awaiting_approval"]["proposal"]["diff"]
    assert detail.locator("pre.diff").text_content() == diff
    page.click("#triage tr.task-row[data-task='tasks/always-pass-waiting'] a.report-link")
    page.wait_for_selector("html[data-ready='1']", timeout=15000)
    assert page.url.endswith("/runs/run-always-pass-waiting/report.html")
    assert page.inner_text("#verdict .badge") == "awaiting_approval"
    assert page.errors == []


def test_pass_at_1_against_the_band_from_a_real_sweep(ds, sweep_run, qa_env_session, page, tmp_path):
    """A real Docker sweep (two models, tests/report/conftest.py) joins the dataset: its pass@1 is drawn against
    its band. The screenshot of this page is the one in the lead's note."""
    report = json.loads((run_dir(qa_env_session, "sweep-run") / "report.json").read_text())
    sweep_row = task_row(
        "tasks/clean-wordfreq-sweep",
        "clean-wordfreq-sweep",
        "sweep-run",
        report,
        30.0,
        str(run_dir(qa_env_session, "sweep-run") / "report.html"),
    )
    dataset = summarize("ds-with-sweep", ["tasks"], [*ds.report.tasks, sweep_row], 31.0)
    path = write_dataset_report(ds.config, dataset)
    open_report(page, path)
    cell = page.locator("#triage tr.task-row[data-task='tasks/clean-wordfreq-sweep'] svg.pband")
    pooled = report["band"]["pooled"]["pass_at_1"]
    assert sweep_row.pass_at_1 == pooled and sweep_row.band == tuple(report["band"]["band"])
    row_text = page.inner_text("#triage tr.task-row[data-task='tasks/clean-wordfreq-sweep']")
    assert f"{pooled:.2f} [{sweep_row.band[0]:g}–{sweep_row.band[1]:g}]" in row_text
    point = cell.locator("circle.point")
    assert ("out" in point.get_attribute("class")) == (report["in_band"] is False)
    width = float(cell.get_attribute("width"))
    assert float(cell.locator("rect.band").get_attribute("x")) == pytest.approx(sweep_row.band[0] * width)
    assert float(point.get_attribute("cx")) == pytest.approx(min(width - 3, max(3, pooled * width)))
    page.click("#triage tr.task-row[data-task='tasks/always-pass-fixed'] button.open")
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    shutil.copy(SCREENSHOT, artifacts_dir() / "dataset-report.png")
    assert page.errors == []
