"""Pick the executor for a `qa run` from `[scheduler] mode` and REDIS_URL (see SchedulerSettings)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from typing import Iterator

import structlog

from envqa.core.config import QAConfig
from envqa.core.errors import InputError
from envqa.scheduler.local import Executor, LocalExecutor
from envqa.store.db import Store

log = structlog.get_logger(__name__)


def resolve_mode(config: QAConfig) -> str:
    mode = os.environ.get("QA_SCHEDULER_MODE") or config.scheduler.mode
    if mode not in ("auto", "embedded", "redis", "local"):
        raise InputError("QA_SCHEDULER_MODE", f"unknown scheduler mode {mode!r} (auto, embedded, redis, local)")
    if mode != "auto":
        return mode
    if redis_url(config):
        return "redis"
    if shutil.which("redis-server"):
        return "embedded"
    log.warning("scheduler.local", reason="no REDIS_URL and no redis-server: trials run one at a time in-process")
    return "local"


def redis_url(config: QAConfig) -> str | None:
    return config.scheduler.redis_url or os.environ.get("REDIS_URL") or None


@contextmanager
def open_executor(config: QAConfig, backend, store: Store, on_event=None) -> Iterator[Executor]:
    """The executor for this run; embedded mode's Redis and workers start here and stop on exit."""
    mode = resolve_mode(config)
    if mode == "local":
        yield LocalExecutor(backend, config, store, on_event=on_event)
        return
    from envqa.scheduler.rq_executor import RQExecutor

    if mode == "redis":
        url = redis_url(config)
        if not url:
            raise InputError("qa.toml", "scheduler.mode is 'redis' but neither REDIS_URL nor scheduler.redis_url is set",
                             "scheduler.mode")
        yield RQExecutor(config, store, url, on_event=on_event)
        return
    from envqa.scheduler.embedded import RedisServer, WorkerPool

    started: dict = {}

    def start() -> str:
        server = started["redis"] = RedisServer().start()
        started["pool"] = WorkerPool(server.url, config.scheduler.workers, "*",
                                     env={"QA_HOME": str(config.home.resolve())},
                                     log_dir=config.home / "workers",
                                     settings_json=config.scheduler.model_dump_json()).start()
        return server.url

    try:
        # Started here, in the main thread, not lazily inside a graph node: the children are told to die
        # with the thread that started them (PR_SET_PDEATHSIG), and a node may run on a pool thread.
        url = start()
        yield RQExecutor(config, store, url, on_event=on_event, watchdog=started["pool"].check)
    finally:
        if "pool" in started:
            started["pool"].stop()
        if "redis" in started:
            started["redis"].cleanup()
