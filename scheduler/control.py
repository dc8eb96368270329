"""Run graphs as jobs on the `control` queue (`qa run --detach`, and the continuation after an approval).

The job carries the run's whole configuration (with QA_HOME made absolute and the Redis URL filled in),
so a worker on another host runs the graph exactly as `qa run` would have, in `redis` mode: its trials go
to their own queues and other workers run them. The job ends when the graph ends or stops at its
approval checkpoint; `qa approve` then enqueues the continuation. Job ids are derived from the run (and
the proposal decided), so enqueueing twice never runs a graph twice.
"""

from __future__ import annotations

import structlog
from redis import Redis

from envqa.core.config import QAConfig
from envqa.scheduler.broker import Broker
from envqa.scheduler.executors import redis_url
from envqa.scheduler.jobs import JobEnvelope, enqueue
from envqa.scheduler.queues import CONTROL_QUEUE

log = structlog.get_logger(__name__)


def job_config(config: QAConfig) -> str:
    url = redis_url(config)
    cfg = config.model_copy(update={
        "home": config.home.resolve(),
        "scheduler": config.scheduler.model_copy(update={"mode": "redis", "redis_url": url}),
    })
    return cfg.model_dump_json(by_alias=True)


def enqueue_graph(config: QAConfig, run_id: str, *, kind: str, env_dir: str | None = None,
                  approval_mode: str = "wait", answer: dict | None = None) -> str:
    """Put the run's graph on the control queue; returns the job id."""
    envelope = JobEnvelope(
        job_id=f"control-{run_id}-{kind}", queue=CONTROL_QUEUE, func="envqa.scheduler.control.run_graph_job",
        payload={"run_id": run_id, "env_dir": env_dir, "config": job_config(config), "approval_mode": approval_mode,
                 "answer": answer, "resume": env_dir is None},
        on_give_up="envqa.scheduler.control.graph_job_gave_up", timeout_sec=config.scheduler.job_timeout_sec)
    conn = Redis.from_url(redis_url(config))
    enqueue(conn, Broker(conn, config.scheduler.lease_ttl_sec), envelope, config.scheduler)
    log.info("control.enqueued", run_id=run_id, job_id=envelope.job_id)
    return envelope.job_id


def run_graph_job(payload: dict) -> str:
    """Worker side: run (or continue) the graph until it ends or waits for approval; returns the status."""
    from pathlib import Path

    from envqa.app.runner import execute_run

    config = QAConfig.model_validate_json(payload["config"])
    env_dir = Path(payload["env_dir"]) if payload.get("env_dir") else None
    report = execute_run(env_dir, config, payload["run_id"], resume=payload["resume"], quiet=True,
                         approval_mode=payload.get("approval_mode") or "wait", answer=payload.get("answer"))
    return str(report.get("verdict"))


def graph_job_gave_up(payload: dict, error_class: str, message: str) -> None:
    """The graph job failed for good: say so in the store, so `qa status` does not wait forever."""
    from envqa.store.db import Store

    config = QAConfig.model_validate_json(payload["config"])
    store = Store(config.db_path)
    store.set_run_status(payload["run_id"], "failed")
    store.set_loop(payload["run_id"], stop_reason=f"failed: {error_class}: {message[:500]}")
