"""Which scheduler mode a `qa run` uses, from `[scheduler] mode` and REDIS_URL (see SchedulerSettings); the app
opens the executor for it (envqa.app.executors)."""

from __future__ import annotations

import os
import shutil

import structlog

from envqa.core.config import QAConfig
from envqa.core.errors import InputError

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
