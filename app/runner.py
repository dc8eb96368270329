"""Wire one `qa run`: config -> store, sandbox backend, executor, checkpointed graph, progress."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from langgraph.types import Command
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from envqa.agents.generator import is_spec_dir, require_model
from envqa.app.approval_checkpoint import settle_checkpoints
from envqa.app.approvals import run_config
from envqa.app.executors import open_executor
from envqa.app.report_html import try_write_html_report
from envqa.core.config import QAConfig
from envqa.core.environment import Environment, load_environment
from envqa.core.errors import InfraError, InputError
from envqa.core.events import RunEvent
from envqa.core.notify import notify
from envqa.core.sandbox import SandboxBackend
from envqa.core.statuses import RunStatus
from envqa.graphs.run_graph import RunDeps, build_run_graph
from envqa.sandbox.backends import create_backend
from envqa.store.checkpoints import open_checkpointer
from envqa.store.db import Store
from envqa.store.postgres import store_url
from envqa.store.versions import VersionStore


def make_backend(config: QAConfig) -> SandboxBackend:
    """The backend `[sandbox] backend` names (registered by sandbox/); InputError for an unknown name."""
    return create_backend(config)


class ProgressView:
    """Turns graph and executor events into a rich progress display on stderr."""

    def __init__(self, progress: Progress | None):
        self.progress = progress
        self.build_task = self.trial_task = None

    def pausing(self, ask):
        """`ask` with the live display stopped while it asks: a live display redraws over whatever is printed
        below it, so the proposal and the question would be drawn over (issue 25: the question was never seen
        and the run waited for a key nobody was asked for). The bars come back for the rest of the run."""

        def ask_visibly(payload: dict) -> dict:
            self.progress.stop()
            try:
                return ask(payload)
            finally:
                self.progress.start()

        return ask_visibly

    def __call__(self, kind: RunEvent, **data) -> None:
        p = self.progress
        if p is None:
            return
        if kind == RunEvent.BUILD_START:
            self.build_task = p.add_task(f"image for {data['env'].name}", total=None)
        elif kind == RunEvent.BUILD_LOG and self.build_task is not None:
            p.update(self.build_task, description=f"building: {data['line'][:60]}")
        elif kind == RunEvent.BUILD_DONE and self.build_task is not None:
            what = "built" if data.get("built") else ("cached" if data.get("tag") else "FAILED")
            p.update(self.build_task, description=f"image {what}", total=1, completed=1)
        elif kind == RunEvent.TRIALS_QUEUED:  # every executor announces a batch's size: the bar shows its total
            if self.trial_task is None:
                self.trial_task = p.add_task("trials", total=0)
            task = next(t for t in p.tasks if t.id == self.trial_task)
            p.update(self.trial_task, total=(task.total or 0) + data["count"])
        elif kind == RunEvent.STALLED:  # Redis mode: work waiting with no live worker to claim it
            if self.trial_task is not None:
                p.update(
                    self.trial_task,
                    description=f"[yellow]queue {data['queue']}: {data['jobs']} job(s), no live "
                    f"worker for {data['seconds']:.0f}s[/]",
                )
        elif kind == RunEvent.TRIAL_START:
            if self.trial_task is None:
                self.trial_task = p.add_task("trials", total=None)
            p.update(self.trial_task, description=f"trial {data['spec'].agent} #{data['spec'].index}")
        elif kind == RunEvent.TRIAL_DONE:
            if self.trial_task is None:
                self.trial_task = p.add_task("trials", total=None)
            r = data["result"]
            p.console.print(
                f"  {r.agent:<8} #{data['spec'].index}  {r.outcome.value:<6} reward={r.reward}"
                + (f"  ({r.error_class})" if r.error_class else ""),
                highlight=False,
            )
            task = next(t for t in p.tasks if t.id == self.trial_task)
            if task.total is not None and task.completed >= task.total:  # results announced without a batch
                p.update(self.trial_task, total=task.completed + 1)
            p.advance(self.trial_task)


def execute_run(
    env_dir: Path,
    config: QAConfig,
    run_id: str,
    *,
    resume: bool = False,
    quiet: bool = False,
    console: Console | None = None,
    approval_mode: str = "wait",
    answer: dict | None = None,
    ask=None,
    loaded: Environment | None = None,
) -> dict:
    """Run (or resume) a run's graph until it ends or stops at an approval checkpoint.

    `answer` resumes a run waiting at its checkpoint (Command(resume=answer)); `ask(payload) -> answer`
    answers checkpoints on the spot (`--approval prompt`); without it the run stops there (awaiting_approval).
    `loaded` is env_dir as the caller already loaded it (`qa run`'s up-front check): not loaded again here, and
    the load node's snapshot is taken from it (a version is read once per process).
    """
    backend = make_backend(config)
    if not resume:
        # Check before writing anything: a malformed environment must leave no run row, checkpoint or run
        # directory behind. The load node's snapshot is taken from this load (store/versions.py `loaded`).
        if is_spec_dir(env_dir):  # issue 13: spec.md only; the graph's generate node writes the task
            require_model(config)
        elif loaded is None or loaded.root != Path(env_dir).resolve():
            loaded = load_environment(env_dir)
        backend.check()  # pings the engine: Docker down -> exit 3 before a run row exists
    elif store_url(config.db_path) is None and not config.db_path.exists():
        raise InputError(str(config.db_path), f"no run with id {run_id!r} to resume (no state database here)")
    config.home.mkdir(parents=True, exist_ok=True)
    store = Store(config.db_path)
    if resume:
        row = store.get_run(run_id)
        if row is None:
            raise InputError(str(config.db_path), f"no run with id {run_id!r} to resume")
        env_dir = Path(row["env_dir"])
        if row["status"] != RunStatus.FINISHED:
            store.set_run_status(run_id, RunStatus.RUNNING)
        config = run_config(store, run_id, config)  # the run goes on as it was started (models, trials, ...)
    else:
        existing = store.get_run(run_id)
        if existing is not None and existing["status"] != RunStatus.QUEUED:  # queued: `qa run --detach` made the row
            raise InputError(str(config.db_path), f"run id {run_id!r} already exists; use --resume")
        store.create_run(run_id, str(Path(env_dir).resolve()))
        store.set_run_status(run_id, RunStatus.RUNNING)
        store.set_loop(run_id, approval_mode=approval_mode, config_json=config.model_dump_json(by_alias=True))
    try:
        with ExitStack() as stack:
            progress = None
            if not quiet and console is not None:
                progress = stack.enter_context(
                    Progress(
                        SpinnerColumn(),
                        TextColumn("{task.description}"),
                        BarColumn(),
                        MofNCompleteColumn(),
                        TimeElapsedColumn(),
                        console=console,
                        transient=False,
                    )
                )
            view = ProgressView(progress)
            if ask is not None and progress is not None:
                ask = view.pausing(ask)
            deps = RunDeps(
                config=config,
                store=store,
                versions=VersionStore(config, store, loaded=loaded),
                backend=backend,
                executor=stack.enter_context(open_executor(config, backend, store, on_event=view)),
                on_event=view,
            )
            graph = build_run_graph(deps, checkpointer=open_checkpointer(config, store, stack))
            thread = {"configurable": {"thread_id": run_id}}
            if answer is not None:
                state = graph.invoke(Command(resume=answer), thread)
            elif resume and graph.get_state(thread).next:
                state = graph.invoke(None, thread)
            elif resume:
                state = graph.get_state(thread).values
            else:
                state = graph.invoke(
                    {"run_id": run_id, "env_dir": str(Path(env_dir).resolve()), "approval_mode": approval_mode}, thread
                )
            state = settle_checkpoints(graph, thread, deps, ask)
    except InfraError as e:  # exit 3 (Docker lost, workers crash-looping, a stalled queue): still say so
        notify(
            config,
            "run_incomplete",
            {
                "run_id": run_id,
                "env_name": (store.get_run(run_id) or {}).get("env_name"),
                "verdict": "incomplete",
                "stop_reason": str(e),
            },
            store=store,
            key="could-not-finish",
        )
        raise
    finally:
        # Each trial removes its container; this catches what an interrupt left behind. It runs after the
        # executor has shut down (embedded workers stopped), so no worker can start a container after it.
        if backend.connected:
            backend.cleanup({"envqa.run": run_id})
            backend.cleanup({"envqa.run": f"gen-{run_id}"})  # the generate node's trials (issue 13)
    html = try_write_html_report(config, run_id)  # end of run or approval checkpoint; never fails the run
    result = store.run_report(run_id) or state  # the store's report: the copy every reader uses
    return {**result, "report_html": str(html)} if html is not None else result
