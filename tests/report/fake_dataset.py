"""A dataset of real `qa run` reports for the dataset report and CI output tests, made without Docker.

Each task is an example run by the app's own runner (execute_run: the graph, the store, report.html) on the fake
sandbox backend (tests/fake_tasks.py), into one QA home: clean-wordfreq comes out clean; always-pass with the loop
off has findings; always-pass waiting at its approval checkpoint awaits approval; always-pass through the loop
(fixed, gated, approved, adopted) is clean with two versions. A fifth task is malformed (no task.toml) and is a
row with its error. Rows are built the way `qa run PATH...` builds them: `task_row()` on `store.run_report()`,
and the dataset is recorded through the store's dataset methods (store/datasets.py) as the dataset run does.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from envqa.app.dataset import build_report
from envqa.app.dataset_models import DatasetReport, TaskRow
from envqa.app.dataset_rows import task_row
from envqa.app.runner import execute_run
from envqa.core.config import QAConfig, load_config
from envqa.store.db import Store
from qa_testkit import EXAMPLES
from tests.fake_tasks import always_pass_backend, use_backend, wordfreq_backend

DATASET_ID = "ds-fake-four"
# (task folder, example, backend, loop iterations, approval mode)
TASKS = [
    ("clean-wordfreq", "clean-wordfreq", wordfreq_backend, 0, "auto"),
    ("always-pass", "always-pass", always_pass_backend, 0, "auto"),
    ("always-pass-waiting", "always-pass", always_pass_backend, 3, "wait"),
    ("always-pass-fixed", "always-pass", always_pass_backend, 3, "auto"),
]
BROKEN = "broken-task"


@dataclass
class FakeDataset:
    home: Path
    root: Path  # the dataset folder (the "repository" the tasks live in)
    config: QAConfig
    report: DatasetReport
    run_reports: dict[str, dict]  # task name -> its run's report, as the store holds it


def summarize(dataset_id: str, paths: list[str], rows: list[TaskRow], seconds: float) -> DatasetReport:
    return build_report(dataset_id, paths, rows, seconds)


def build(base: Path) -> FakeDataset:
    home, root = base / "qa-home", base / "repo" / "tasks"
    root.mkdir(parents=True)
    rows, reports, started = [], {}, time.monotonic()
    for name, example, backend_of, iterations, approval in TASKS:
        config = load_config(
            None,
            {
                "home": str(home),
                "sandbox.backend": use_backend(backend_of()),
                "scheduler.mode": "local",
                "loop.max_iterations": iterations,
            },
        )
        task_dir = shutil.copytree(EXAMPLES / example, root / name)
        t0 = time.monotonic()
        execute_run(task_dir, config, f"run-{name}", quiet=True, approval_mode=approval)
        store = Store(config.db_path)
        try:
            report = store.run_report(f"run-{name}")
        finally:
            store.close()
        reports[name] = report
        html = config.runs_dir / f"run-{name}" / "report.html"
        rows.append(
            task_row(
                f"tasks/{name}",
                name,
                f"run-{name}",
                report,
                time.monotonic() - t0,
                str(html) if html.is_file() else None,
            )
        )
    (root / BROKEN).mkdir()
    rows.append(
        task_row(
            f"tasks/{BROKEN}",
            BROKEN,
            None,
            None,
            None,
            None,
            error=f"{root / BROKEN}: not an environment (no task.toml, no task.yaml)",
        )
    )
    report = summarize(DATASET_ID, ["tasks"], rows, time.monotonic() - started)
    store = Store(config.db_path)
    try:  # recorded as the dataset run records it, for `qa serve`
        store.create_dataset(DATASET_ID, ["tasks"], {}, "{}")
        store.add_dataset_tasks(DATASET_ID, [(r.path, r.name) for r in rows])
        for r in rows:
            if r.run_id:
                store.link_dataset_run(DATASET_ID, r.path, r.run_id)
            store.set_dataset_task(DATASET_ID, r.path, "invalid" if r.error else "done", r.model_dump(mode="json"))
        store.finish_dataset(DATASET_ID, "finished", report.model_dump(mode="json"))
    finally:
        store.close()
    return FakeDataset(home=home, root=root.parent, config=config, report=report, run_reports=reports)


_BUILT: dict[str, FakeDataset] = {}


def fake_dataset(tmp_path_factory) -> FakeDataset:
    """One per test session, whichever test module asks first; its store is the SQLite file in its QA home even
    on the Postgres pass (tests that open it drop QA_STORE_URL: `sqlite_store`)."""
    if "one" not in _BUILT:
        saved = os.environ.pop("QA_STORE_URL", None)
        try:
            _BUILT["one"] = build(tmp_path_factory.mktemp("fake-dataset"))
        finally:
            if saved is not None:
                os.environ["QA_STORE_URL"] = saved
    return _BUILT["one"]


def sqlite_env(home: Path) -> dict:
    """The environment of a `qa` process reading the fake dataset's store."""
    return {**{k: v for k, v in os.environ.items() if k != "QA_STORE_URL"}, "QA_HOME": str(home)}
