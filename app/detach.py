"""The bodies of the `control` queue's jobs (enqueued by envqa.scheduler.control.enqueue_graph): run or continue
a run's graph on a worker, exactly as `qa run` would in `redis` mode, until it ends or waits for approval."""

from __future__ import annotations

from pathlib import Path

from envqa.app.jobs import resolve_config
from envqa.app.runner import execute_run
from envqa.core.config import QAConfig
from envqa.core.job_bodies import JobKind, register_job_body
from envqa.core.statuses import RunStatus
from envqa.store.db import Store


def run_graph_job(payload: dict) -> str:
    """Worker side: run (or continue) the graph until it ends or waits for approval; returns the status."""
    config = _config(payload)
    env_dir = Path(payload["env_dir"]) if payload.get("env_dir") else None
    report = execute_run(
        env_dir,
        config,
        payload["run_id"],
        resume=payload["resume"],
        quiet=True,
        approval_mode=payload.get("approval_mode") or "wait",
        answer=payload.get("answer"),
    )
    return str(report.get("verdict"))


def graph_job_gave_up(payload: dict, error_class: str, message: str) -> None:
    """The graph job failed for good: say so in the store, so `qa status` does not wait forever."""
    config = _config(payload)
    store = Store(config.db_path)
    store.set_run_status(payload["run_id"], RunStatus.FAILED)
    store.set_loop(payload["run_id"], stop_reason=f"failed: {error_class}: {message[:500]}")


def _config(payload: dict) -> QAConfig:
    """The run's config: read back from the store by hash (a dict), or JSON text from an older job."""
    raw = resolve_config(payload)["config"]
    return QAConfig.model_validate(raw) if isinstance(raw, dict) else QAConfig.model_validate_json(raw)


# Core names these bodies by kind (envqa.core.job_bodies); a worker's control job runs the body registered here.
register_job_body(JobKind.GRAPH, run_graph_job)
register_job_body(JobKind.GRAPH_GIVE_UP, graph_job_gave_up)
