"""`qa worker` and `qa queues`: the Redis side of the scheduler, a worker process and a look at its queues."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.console import Console

from envqa.app.cli.common import cli_config, fail
from envqa.core.defaults import REDIS_STATUS_CONNECT_SEC
from envqa.core.errors import EnvQAError, InputError
from envqa.core.logs import configure_logging


def worker(
    queues: str = typer.Option(
        "*", "--queues", "-q", help="comma-separated queues (e.g. anthropic/claude-sonnet-4-5,sandbox); * = all"
    ),
    url: str | None = typer.Option(None, "--url", help="Redis URL (default $REDIS_URL)"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
    limit: list[str] | None = typer.Option(None, "--limit", help="QUEUE=N concurrency across all workers (repeatable)"),
    burst: bool = typer.Option(False, "--burst", help="exit when no work is left"),
    name: str | None = typer.Option(None, "--name", help="worker name (default: generated)"),
) -> None:
    """Run one worker: rq's own SimpleWorker (with rq's scheduler) on these queues; `rq worker --with-scheduler` on
    the same queues does the same work. --limit QUEUE=N sets that queue's RateLimit concurrency in Redis now."""
    configure_logging()
    try:
        from envqa.core.queues import normalize_queue
        from envqa.scheduler.dispatch import set_limit
        from envqa.scheduler.worker import ALL_QUEUES, run_worker

        settings = _scheduler_settings(config, limit)
        names = [q.strip() for q in queues.split(",") if q.strip()]
        try:
            names = [q if q == ALL_QUEUES else normalize_queue(q) for q in names]
        except ValueError as e:
            raise InputError("--queues", str(e)) from None
        from redis import Redis

        conn = Redis.from_url(_redis_url(url, config))
        flagged = [normalize_queue(q.rpartition("=")[0]) for q in limit or []]

        def publish_flags(w) -> None:  # a flag given here wins until the next enqueue states the limit again
            for q in flagged:
                set_limit(conn, settings, q)

        run_worker(conn, names, settings, burst=burst, name=name, on_start=publish_flags)
    except EnvQAError as e:
        fail(e)
    except ValueError as e:
        fail(InputError("--url", str(e)))


def queues(
    as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    url: str | None = typer.Option(None, "--url", help="Redis URL (default $REDIS_URL)"),
    config: Path | None = typer.Option(None, "--config", "-c", help="qa.toml to read (default ./qa.toml)"),
) -> None:
    """Depth, running, limit and parked-until of every queue."""
    configure_logging()
    try:
        from redis import Redis
        from redis.exceptions import ConnectionError as RedisConnectionError

        from envqa.scheduler.status import queue_status

        target = _redis_url(url, config)
        try:
            rows = queue_status(Redis.from_url(target, socket_connect_timeout=REDIS_STATUS_CONNECT_SEC))
        except RedisConnectionError as e:
            raise EnvQAError(f"cannot reach Redis at {target}: {e}") from None
        except ValueError as e:
            raise InputError("--url", str(e)) from None
    except EnvQAError as e:
        fail(e)
    if as_json:
        sys.stdout.write(json.dumps({"queues": [r.model_dump(mode="json") for r in rows]}) + "\n")
        return
    from rich.table import Table

    table = Table("queue", "depth", "delayed", "running", "limit", "parked until", "reclaimed")
    for r in rows:
        table.add_row(
            r.queue,
            str(r.depth),
            str(r.delayed),
            str(r.running),
            str(r.limit or "-"),
            r.parked_until.isoformat(timespec="seconds") if r.parked_until else "-",
            str(r.reclaimed),
        )
    Console().print(table)


def _scheduler_settings(config: Path | None, limits: list[str] | None):
    """Scheduler settings for worker/queues: QA_SCHEDULER_SETTINGS (embedded mode) or qa.toml, plus --limit."""
    import os

    from envqa.core.config import SchedulerSettings
    from envqa.scheduler.embedded import SETTINGS_ENV

    raw = os.environ.get(SETTINGS_ENV)
    settings = SchedulerSettings.model_validate_json(raw) if raw else cli_config(config, {}).scheduler
    for item in limits or []:
        name, _, n = item.rpartition("=")
        if not name or not n.isdigit() or int(n) < 1:
            raise InputError("--limit", f"expected QUEUE=N with N >= 1, got {item!r}")
        special = {"sandbox": settings.sandbox, "analysis": settings.analysis}.get(name.strip().lower())
        (special or settings.models.setdefault(name, type(settings.defaults)())).concurrency = int(n)
    return settings


def _redis_url(url: str | None, config: Path | None) -> str:
    import os

    found = url or os.environ.get("REDIS_URL") or cli_config(config, {}).scheduler.redis_url
    if not found:
        raise InputError(
            "REDIS_URL",
            "not set: pass --url or set REDIS_URL (embedded mode's Redis lives only while its `qa run` runs)",
        )
    return found
