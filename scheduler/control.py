"""Run graphs as jobs on the `control` queue (`qa run --detach`, and the continuation after an approval).

The job names the run's whole configuration by hash (saved in the store, with QA_HOME made absolute and the
Redis URL filled in; scheduler/payloads.py), so a worker on another host runs the graph exactly as `qa run`
would have, in `redis` mode: its trials go
to their own queues and other workers run them. The job ends when the graph ends or stops at its
approval checkpoint; `qa approve` then enqueues the continuation. Job ids are derived from the run (and
the proposal decided), so enqueueing twice never runs a graph twice.
"""

from __future__ import annotations

from pathlib import Path

import structlog
from redis import Redis

from envqa.core.config import QAConfig
from envqa.core.executor import GRAPH_BODY, GRAPH_GIVE_UP
from envqa.core.queues import CONTROL_QUEUE
from envqa.scheduler.executors import redis_url
from envqa.scheduler.jobs import JobEnvelope, enqueue
from envqa.scheduler.payloads import by_reference
from envqa.store.db import Store

log = structlog.get_logger(__name__)


def job_config(config: QAConfig) -> str:
    url = redis_url(config)
    cfg = config.model_copy(
        update={
            "home": config.home.resolve(),
            "scheduler": config.scheduler.model_copy(update={"mode": "redis", "redis_url": url}),
        }
    )
    return cfg.model_dump_json(by_alias=True)


def enqueue_graph(
    config: QAConfig,
    run_id: str,
    *,
    kind: str,
    env_dir: str | None = None,
    approval_mode: str = "wait",
    answer: dict | None = None,
) -> str:
    """Put the run's graph on the control queue; returns the job id."""
    payload = {
        "run_id": run_id,
        "env_dir": env_dir,
        "config": job_config(config),
        "approval_mode": approval_mode,
        "answer": answer,
        "resume": env_dir is None,
    }
    envelope = JobEnvelope(
        job_id=f"control-{run_id}-{kind}",
        queue=CONTROL_QUEUE,
        func=GRAPH_BODY,
        payload=by_reference(Store(config.db_path), payload, str(Path(config.db_path).resolve())),
        on_give_up=GRAPH_GIVE_UP,
        timeout_sec=config.scheduler.job_timeout_sec,
    )
    conn = Redis.from_url(redis_url(config))
    enqueue(conn, envelope, config.scheduler)
    log.info("control.enqueued", run_id=run_id, job_id=envelope.job_id)
    return envelope.job_id
