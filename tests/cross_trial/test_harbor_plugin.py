"""The Harbor job plugin, called the way Harbor 0.26 calls it (harbor/cli/job_plugins.py): the class is imported
from its `module:Class` path (or the `harbor.plugins` entry point), built with the `--plugin-kwarg` values as
keyword arguments, checked against the runtime-checkable `JobPlugin` protocol, `await on_job_start(job)` when the
job starts and `await on_job_end(job_result)` when it ends. Harbor is not installed (it needs Python 3.12), so the
protocol and the two calls are restated here from its source, and the job is the fixture generator's folder."""

from __future__ import annotations

import asyncio
import importlib
import json
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Protocol, runtime_checkable

import pytest

from envqa.demo.imported_runs import write_fixture_runs

pytestmark = pytest.mark.fast
REPO = Path(__file__).resolve().parents[2]


@runtime_checkable
class JobPlugin(Protocol):  # harbor/models/job/plugin.py (0.26.0), verbatim but for the type names
    async def on_job_start(self, job: Any) -> None: ...

    async def on_job_end(self, job_result: Any) -> None: ...


def run_coroutine(coro):
    """Await `coro` as Harbor's Job does, on an event loop of its own in a thread: this worker process may already
    run one (Playwright's sync API keeps a loop in the main thread once a browser test ran), and asyncio.run() refuses
    to start a second loop in a thread that has one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result(timeout=300)


def import_class(import_path: str) -> type:  # harbor/utils/import_path.py: "module:Class"
    module, _, name = import_path.partition(":")
    return getattr(importlib.import_module(module), name)


async def run_job(import_path: str, kwargs: dict, job: Any, job_result: Any) -> Any:
    """attach_job_plugin, then (after the trials) finalize_job_plugins, as harbor/cli/job_plugins.py does."""
    plugin = import_class(import_path)(**kwargs)
    if not isinstance(plugin, JobPlugin):
        raise TypeError(f"{import_path!r} is not a JobPlugin.")
    await plugin.on_job_start(job)
    await plugin.on_job_end(job_result)
    return plugin


def _job(job_dir: Path) -> SimpleNamespace:
    config = SimpleNamespace(jobs_dir=job_dir.parent, job_name=job_dir.name)
    return SimpleNamespace(config=config, job_dir=config.jobs_dir / config.job_name)  # Job.job_dir (harbor/job.py)


def test_the_plugin_writes_the_triage_into_the_finished_job_folder(tmp_path):
    runs = write_fixture_runs(tmp_path / "runs")
    entry = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["harbor.plugins"]
    job_result = SimpleNamespace(id="8e0c1a52-0000-4000-8000-000000000000", n_total_trials=54)
    run_coroutine(run_job(entry["qa-triage"], {"count_stale": False}, _job(runs.harbor_job), job_result))
    doc = json.loads((runs.harbor_job / "qa-triage.json").read_text())
    assert "error" not in doc and doc["trials"] == 54 and doc["exit_code"] == 1
    found = {t["task"]: sorted(f["rule"] for f in t["findings"]) for t in doc["tasks"]}
    assert found == {
        "csv-report": ["converging-wrong-answers", "test-fails-alone"],
        "hello-world": [],
        "log-rotate": ["agent-never-ran"],
        "port-config": ["copied-verifier-values"],
        "release-pipeline": [],
        "sat-hard": [],
    }
    html = (runs.harbor_job / "qa-triage.html").read_text()
    assert "converging-wrong-answers" in html and "&#39;1234.5&#39;" in html  # escaped, not markup
    assert "<script>" not in html.split('id="qa-data"')[0]


def test_a_job_folder_it_cannot_read_gets_an_error_file_and_the_job_goes_on(tmp_path):
    job_dir = tmp_path / "jobs" / "empty-job"
    job_dir.mkdir(parents=True)
    plugin = run_coroutine(
        run_job(
            "envqa.app.harbor_plugin:QATriagePlugin",
            {"config": str(tmp_path / "nope.toml")},
            _job(job_dir),
            SimpleNamespace(id="x"),
        )
    )
    doc = json.loads((job_dir / "qa-triage.json").read_text())
    assert "config file not found" in doc["error"] and plugin.job_dir == job_dir
