"""Run a dataset (issue 25): every task as its own run (`execute_run`, the same graph, store rows and report as a
single `qa run`), several at once, under one dataset id that `qa run --resume DS_ID` finishes.

The tasks' graphs run on `jobs` threads of this process; their trials run where a single `qa run`'s would:
- embedded (the default): on ONE private redis-server and worker pool shared by the whole dataset (a `qa run` per
  task would start its own). Each task's run sees that server as REDIS_URL, so it runs in `redis` mode with its
  stored config untouched (`qa approve` later continues it as it would any run). With no redis-server (or
  `[scheduler] mode = "local"`) the trials run in the task's thread.
- REDIS_URL: on the queues of that Redis, as jobs any `qa worker` on any host picks up (a killed worker's job
  comes back to another). The graphs stay here, not on the `control` queue: a graph job holds its worker until
  its run ends, so graphs on every worker would wait for trials that no worker is free to run.
What is recorded is never repeated: a task whose run is final (finished, or waiting for approval) is read back from
the store; a task whose run began is resumed from its checkpoint (its recorded trials are not run again); only
tasks that never began start a new run.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from envqa.app.dataset import (
    DatasetInterrupted,
    Task,
    build_report,
    check_task,
    incomplete_row,
    invalid_row,
    row_from_report,
)
from envqa.app.dataset_models import DatasetReport, TaskRow
from envqa.core.config import QAConfig
from envqa.core.defaults import DATASET_POOL_STOP_SEC
from envqa.core.defaults import DATASET_STOP_GRACE_SEC as STOP_GRACE_SEC
from envqa.core.errors import EnvQAError, InfraError, InputError
from envqa.core.statuses import FINAL_TASK, RUN_WITH_REPORT, DatasetStatus, DatasetTaskStatus, RunStatus
from envqa.core.verdicts import Verdict
from envqa.store.db import Store

log = structlog.get_logger(__name__)


@dataclass
class DatasetPlan:
    """What a dataset run does: its id, its tasks (in order) and how to run them."""

    dataset_id: str
    tasks: list[Task]
    paths: list[str]
    jobs: int
    approval_mode: str = "wait"
    options: dict = field(default_factory=dict)


def new_dataset_id() -> str:
    return f"ds-{uuid.uuid4().hex[:10]}"


def create_dataset(config: QAConfig, plan: DatasetPlan) -> Store:
    config.home.mkdir(parents=True, exist_ok=True)
    store = Store(config.db_path)
    if store.get_dataset(plan.dataset_id) is not None:
        raise InputError(str(config.db_path), f"dataset id {plan.dataset_id!r} already exists; use --resume")
    store.create_dataset(
        plan.dataset_id,
        plan.paths,
        {**plan.options, "jobs": plan.jobs, "approval_mode": plan.approval_mode},
        config.model_dump_json(by_alias=True),
    )
    store.add_dataset_tasks(plan.dataset_id, [(str(t.path), t.name) for t in plan.tasks])
    return store


def load_dataset(config: QAConfig, dataset_id: str) -> tuple[QAConfig, DatasetPlan, Store]:
    """A stored dataset, to resume: its config, tasks and options as it was started."""
    if not config.db_path.exists() and not os.environ.get("QA_STORE_URL"):
        raise InputError(str(config.db_path), f"no dataset run with id {dataset_id!r} to resume (no state database)")
    store = Store(config.db_path)
    row = store.get_dataset(dataset_id)
    if row is None:
        raise InputError(str(config.db_path), f"no dataset run with id {dataset_id!r} to resume")
    stored = QAConfig.model_validate_json(row["config_json"]).model_copy(update={"home": config.home})
    tasks = [
        Task(path=Path(t["path"]), name=t["name"], error=check_task(Path(t["path"])))
        for t in store.dataset_tasks(dataset_id)
    ]  # checked again: what never ran must be valid now
    opts = row["options"]
    return (
        stored,
        DatasetPlan(dataset_id, tasks, row["paths"], opts.get("jobs") or 1, opts.get("approval_mode") or "wait", opts),
        store,
    )


class DatasetRunner:
    """Runs the plan's tasks that are not done; `on_done(row)` after each (the progress view)."""

    def __init__(self, config: QAConfig, store: Store, plan: DatasetPlan, on_done: Callable[[TaskRow], None] | None):
        self.config, self.store, self.plan = config, store, plan
        self.on_done = on_done or (lambda row: None)
        self.rows: dict[str, TaskRow] = {}
        self.in_flight: dict[str, str] = {}  # task path -> run id
        self.stopping = threading.Event()

    # what is already recorded ----------------------------------------------------------------------------------
    def recorded(self) -> tuple[dict[str, TaskRow], dict[str, str | None]]:
        """(final rows, path -> run id to continue) from the store. A final task's row is rebuilt from its run's
        current report (an approval since may have changed its verdict)."""
        done, todo = {}, {}
        for t in self.store.dataset_tasks(self.plan.dataset_id):
            task = Task(Path(t["path"]), t["name"])
            run = self.store.get_run(t["run_id"]) if t["run_id"] else None
            if t["status"] in FINAL_TASK and t["row"] is not None:
                report = self.store.run_report(t["run_id"]) if run and run["status"] in RUN_WITH_REPORT else None
                seconds = t["row"].get("seconds")
                done[t["path"]] = (
                    row_from_report(task, {**report, "report_html": t["row"].get("report_html")}, seconds)
                    if report
                    else TaskRow.model_validate(t["row"])
                )
            elif run is not None and run["status"] in RUN_WITH_REPORT and self.store.run_report(t["run_id"]):
                done[t["path"]] = row_from_report(task, self.store.run_report(t["run_id"]), None)
                self.store.set_dataset_task(
                    self.plan.dataset_id, t["path"], DatasetTaskStatus.DONE, done[t["path"]].model_dump()
                )
            else:
                todo[t["path"]] = t["run_id"] if run is not None else None
        return done, todo

    def run(self) -> DatasetReport:
        from envqa.app.runner import execute_run  # noqa: F401 - imported once here, not by the task threads at once

        started = time.monotonic()
        done, todo = self.recorded()
        self.rows.update(done)
        for row in done.values():
            self.on_done(row)
        pending = [t for t in self.plan.tasks if str(t.path) in todo]
        self.store.set_dataset_status(self.plan.dataset_id, DatasetStatus.RUNNING)
        from envqa.scheduler.executors import resolve_mode

        try:
            if pending:
                self._run_here(pending, todo, shared=resolve_mode(self.config) == "embedded")
        except DatasetInterrupted:
            self.store.set_dataset_status(self.plan.dataset_id, DatasetStatus.INTERRUPTED)
            raise
        return self.finish(time.monotonic() - started)

    def finish(self, seconds: float | None, status: str = DatasetStatus.FINISHED) -> DatasetReport:
        rows = [
            self.rows.get(str(t.path)) or incomplete_row(t, self.in_flight.get(str(t.path)), "not run")
            for t in self.plan.tasks
        ]
        report = build_report(self.plan.dataset_id, self.plan.paths, rows, seconds)
        report.report_html = write_html(self.config, report)
        self.store.finish_dataset(self.plan.dataset_id, status, report.model_dump(mode="json"))
        return report

    # one task -------------------------------------------------------------------------------------------------
    def record(self, task: Task, row: TaskRow) -> None:
        """Keep a task's row: done (its run is final: never run again), invalid, or failed (--resume continues it)."""
        run = self.store.get_run(row.run_id) if row.run_id else None
        status = (
            DatasetTaskStatus.INVALID
            if row.verdict == Verdict.INVALID
            else (DatasetTaskStatus.DONE if run and run["status"] in RUN_WITH_REPORT else DatasetTaskStatus.FAILED)
        )
        if self.stopping.is_set() and status == DatasetTaskStatus.FAILED:
            return  # an interrupt broke it: --resume continues its run
        self.store.set_dataset_task(self.plan.dataset_id, str(task.path), status, row.model_dump(mode="json"))
        self.rows[str(task.path)] = row
        self.in_flight.pop(str(task.path), None)
        self.on_done(row)

    def run_task(self, task: Task, run_id: str | None) -> TaskRow:
        """One task's run, in this process (its graph here; its trials where the executor puts them)."""
        from envqa.app.runner import execute_run

        t0 = time.monotonic()
        if task.error:
            return invalid_row(task, task.error)
        resume = run_id is not None
        run_id = run_id or f"run-{uuid.uuid4().hex[:10]}"
        self.in_flight[str(task.path)] = run_id
        self.store.link_dataset_run(self.plan.dataset_id, str(task.path), run_id)
        try:
            report = execute_run(
                task.path, self.config, run_id, resume=resume, quiet=True, approval_mode=self.plan.approval_mode
            )
            if resume and not report.get("verdict"):
                # killed after its run row was written but before the graph's first checkpoint: nothing to
                # continue, so it starts afresh under the same id (`queued` is the state a new run may reuse)
                self.store.set_run_status(run_id, RunStatus.QUEUED)
                report = execute_run(task.path, self.config, run_id, quiet=True, approval_mode=self.plan.approval_mode)
        except InputError as e:  # no run row was written (bad input is refused first)
            run = self.store.get_run(run_id)
            return invalid_row(task, str(e), run_id if run else None, time.monotonic() - t0)
        except EnvQAError as e:
            return incomplete_row(task, run_id, str(e), time.monotonic() - t0)
        except Exception as e:
            log.exception("dataset.task_crashed", task=task.name, run_id=run_id)
            return incomplete_row(task, run_id, f"{type(e).__name__}: {e}", time.monotonic() - t0)
        return row_from_report(task, report, time.monotonic() - t0)

    # embedded: threads, one shared redis-server + worker pool ------------------------------------------------
    def _run_here(self, pending: list[Task], todo: dict[str, str | None], shared: bool) -> None:
        futures: dict[Future, Task] = {}
        threads: list[threading.Thread] = []
        queue = list(pending)
        if shared and self.config.scheduler.mode == "embedded":  # "auto": the tasks take the shared REDIS_URL
            self.config = self.config.model_copy(
                update={"scheduler": self.config.scheduler.model_copy(update={"mode": "auto"})}
            )

        def start(task: Task) -> None:
            fut: Future = Future()
            futures[fut] = task

            def body() -> None:
                try:
                    fut.set_result(self.run_task(task, todo.get(str(task.path))))
                except BaseException as e:  # noqa: BLE001 - handed to the main thread
                    fut.set_exception(e)

            # daemon: Ctrl-C waits a little for the graphs to notice, not for them to finish
            thread = threading.Thread(target=body, name=f"task-{task.name}", daemon=True)
            threads.append(thread)
            thread.start()

        try:
            with shared_workers(self.config, self.plan.jobs) if shared else _nothing() as watchdog:
                while queue or futures:
                    while queue and len(futures) < self.plan.jobs:
                        start(queue.pop(0))
                    finished = [f for f in futures if f.done()]
                    for fut in finished:
                        self.record(futures.pop(fut), fut.result())
                    if not finished:
                        if watchdog is not None:
                            watchdog()
                        time.sleep(0.1)  # the main thread stays responsive to Ctrl-C
        except (KeyboardInterrupt, InfraError) as e:
            # The shared workers are stopped by now (leaving the `with`). A task's graph may still start a container
            # (a probe's image scan runs in its thread): remove, give the graphs a moment to fail on the lost
            # workers (each run's own cleanup then removes its containers), and remove again.
            self.stopping.set()
            self.remove_containers()
            deadline = time.monotonic() + STOP_GRACE_SEC
            while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
                time.sleep(0.1)
            self.remove_containers()
            raise DatasetInterrupted(str(e) or "interrupted") from e

    def remove_containers(self) -> None:
        """Ctrl-C: what the interrupted tasks' trials left running goes (each run's own cleanup may not run)."""
        from envqa.app.runner import make_backend

        try:
            backend = make_backend(self.config)
            for run_id in list(self.in_flight.values()):
                if getattr(backend, "connected", True):
                    backend.cleanup({"envqa.run": run_id})
        except Exception as e:  # noqa: BLE001 - best effort on the way out; the resume's run cleans up again
            log.warning("dataset.cleanup_failed", error=f"{type(e).__name__}: {e}")


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc) -> None:
        return None


class shared_workers:
    """One private redis-server and worker pool for all the dataset's tasks; REDIS_URL names it while it runs."""

    def __init__(self, config: QAConfig, jobs: int):
        self.config, self.jobs = config, jobs
        self.server = self.pool = None
        self.saved = os.environ.get("REDIS_URL")

    def __enter__(self):
        from envqa.scheduler.embedded import RedisServer, WorkerPool

        self.server = RedisServer().start()
        settings = self.config.scheduler
        self.pool = WorkerPool(
            self.server.url,
            max(settings.workers, self.jobs),
            "*",
            env={"QA_HOME": str(self.config.home.resolve())},
            log_dir=self.config.home / "workers",
            settings_json=settings.model_dump_json(),
        ).start()
        os.environ["REDIS_URL"] = self.server.url
        return self.pool.check

    def __exit__(self, *exc) -> None:
        if self.saved is None:
            os.environ.pop("REDIS_URL", None)
        else:
            os.environ["REDIS_URL"] = self.saved
        if self.pool is not None:
            self.pool.stop(grace=DATASET_POOL_STOP_SEC)
        if self.server is not None:
            self.server.cleanup()


def write_html(config: QAConfig, report: DatasetReport) -> str | None:
    """Part B's dataset page; a page that cannot be drawn never fails the dataset (the JSON stands)."""
    try:
        from envqa.app.report_html.dataset import write_dataset_report
    except ImportError:
        return None
    try:
        return str(write_dataset_report(config, report))
    except Exception as e:  # noqa: BLE001 - logged
        log.warning("dataset.report_html_failed", error=f"{type(e).__name__}: {e}")
        return None
