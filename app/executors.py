"""Open the executor for a `qa run`: in-process, embedded Redis with local workers, or a Redis fleet.

The mode comes from `[scheduler] mode` and REDIS_URL (envqa.scheduler.executors.resolve_mode). Wiring an
implementation to the graph is the app's job: the graph only sees the `Executor` protocol.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from envqa.app.local_executor import LocalExecutor
from envqa.core.config import QAConfig
from envqa.core.errors import InputError
from envqa.core.executor import Executor
from envqa.scheduler.embedded import RedisServer, WorkerPool
from envqa.scheduler.executors import redis_url, resolve_mode
from envqa.scheduler.rq_executor import RQExecutor


@contextmanager
def open_executor(config: QAConfig, backend, store, on_event=None) -> Iterator[Executor]:
    """The executor for this run; embedded mode's Redis and workers start here and stop on exit."""
    mode = resolve_mode(config)
    if mode == "local":
        yield LocalExecutor(backend, config, store, on_event=on_event)
        return
    if mode == "redis":
        url = redis_url(config)
        if not url:
            raise InputError(
                "qa.toml",
                "scheduler.mode is 'redis' but neither REDIS_URL nor scheduler.redis_url is set",
                "scheduler.mode",
            )
        yield RQExecutor(config, store, url, on_event=on_event)
        return
    started: dict = {}

    def start() -> str:
        server = started["redis"] = RedisServer().start()
        started["pool"] = WorkerPool(
            server.url,
            config.scheduler.workers,
            "*",
            env={"QA_HOME": str(config.home.resolve())},
            log_dir=config.home / "workers",
            settings_json=config.scheduler.model_dump_json(),
        ).start()
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
