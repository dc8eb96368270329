"""`qa serve` lists the runs and serves their reports: the real CLI and uvicorn, browsed in Chromium."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from qa_testkit import QA, wait_for

from .conftest import run_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(env: dict, cwd):
    """`qa serve` on a free port until the block ends; yields its base URL once /healthz answers."""
    port = free_port()
    proc = subprocess.Popen(
        [QA, "serve", "--port", str(port)], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: fetch(base + "/healthz")[0] == 200 or proc.poll() is not None, 30, "qa serve to answer")
        assert proc.poll() is None, proc.stderr.read()
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


@pytest.fixture
def server(sweep_run, loop_run, qa_env_session, tmp_path):
    with serving(qa_env_session, tmp_path) as base:
        yield base


def test_run_list_links_to_reports_that_render(server, qa_env_session, page):
    page.goto(server + "/")
    rows = page.locator("#runs tr[data-run]")
    assert {"loop-run", "sweep-run"} <= {rows.nth(i).get_attribute("data-run") for i in range(rows.count())}
    assert "out_of_band" in page.locator("#runs tr[data-run='loop-run']").inner_text()
    page.click("#runs tr[data-run='loop-run'] a")
    page.wait_for_selector("html[data-ready='1']", timeout=15000)
    assert page.url == server + "/runs/loop-run/report.html"
    assert page.locator("#timeline circle.point").count() == 4  # two models, two versions
    assert page.errors == []


def test_a_stale_report_is_rebuilt_and_unknown_runs_are_404(server, qa_env_session):
    html, src = (
        run_dir(qa_env_session, "sweep-run") / "report.html",
        run_dir(qa_env_session, "sweep-run") / "report.json",
    )
    os.utime(html, (1, 1))  # older than report.json: the run moved on since the page was written
    status, body = fetch(server + "/runs/sweep-run/report.html")
    assert status == 200 and 'id="qa-data"' in body
    assert html.stat().st_mtime >= src.stat().st_mtime
    assert fetch(server + "/runs/no-such-run/report.html")[0] == 404
    assert fetch(server + "/runs/..%2F..%2Fetc/report.html")[0] == 404
