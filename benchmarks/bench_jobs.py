"""Job bodies and a worker entry point shared by the benchmarks (imported by worker processes, which get
benchmarks/ on PYTHONPATH). Not a benchmark itself: `make bench` does not run it.

`flaky` fails its first run when asked to, each side detecting "first run" from what its job already holds
(stock rq: the job's retries_left; envqa: the execution count its job wrapper keeps), so neither side pays
an extra Redis command for it.
"""

from __future__ import annotations

import sys


class FlakyFailure(ConnectionError):
    """A transient failure (a ConnectionError: envqa's policy retries it; rq retries per Retry(max=1))."""


def flaky(payload: dict | None = None) -> None:
    if not (payload or {}).get("fail"):
        return
    from rq import get_current_job

    job = get_current_job()
    if "executions" in job.meta:  # run by envqa's job wrapper
        from envqa.scheduler.dispatch import current_attempt

        first = current_attempt() == 1
    else:
        first = job.retries_left == 1
    if first:
        raise FlakyFailure("fails once (simulated)")


def worker_main(side: str, url: str, queues: str, settings_json: str) -> None:
    """A burst worker that waits for the go signal (`BLPOP bench:go`) after start-up, so imports and
    registration are outside the timed part. Stock rq: SimpleWorker with its scheduler; envqa: what `qa worker`
    runs (configure_logging, then run_worker)."""
    from redis import Redis
    from rq import Queue, SimpleWorker

    from envqa.core.config import SchedulerSettings
    from envqa.scheduler.worker import run_worker

    conn = Redis.from_url(url)
    names = queues.split(",")
    conn.incr("bench:ready")
    conn.blpop(["bench:go"], timeout=120)
    if side == "rq":
        SimpleWorker([Queue(q, connection=conn) for q in names], connection=conn).work(
            burst=True, logging_level="WARNING", with_scheduler=True
        )
    else:
        from envqa.core.logs import configure_logging

        configure_logging()  # as `qa worker` does before run_worker
        run_worker(conn, names, SchedulerSettings.model_validate_json(settings_json), burst=True)


# --- the scheduler benchmark's model call ----------------------------------------------------------
# One call to the fake provider through the product's OpenAI adapter (SDK retries off, no transient retries
# of its own): a 429 raises RateLimited with the server's Retry-After, a 500 TransientProviderError. What
# each side does with them is its scheduler's business (ours parks or backs off; rq's Retry retries).
# The result is "recorded" by creating a marker file exclusively: `fresh` is False for a second recording.


def _log(path: str, **event) -> None:
    import json
    import os
    import time

    line = json.dumps({"pid": os.getpid(), "t": time.time(), **event}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())  # one write with O_APPEND: lines from many processes never interleave
    finally:
        os.close(fd)


_clients: dict = {}


def _client(url: str, model: str):
    from envqa.core.config import ProviderEndpoint
    from envqa.providers.openai_client import OpenAIClient

    key = (url, model)
    if key not in _clients:
        _clients[key] = OpenAIClient(
            f"openai-compatible/{model}",
            model,
            ProviderEndpoint(kind="openai-compatible", timeout_sec=60, transient_retries=0),
            "sk-bench",
            url + "/v1",
            None,
        )
    return _clients[key]


def provider_call(payload: dict) -> str:
    import os

    from envqa.core.errors import ProviderError
    from envqa.core.model_client import Message

    _log(payload["log"], ev="start", id=payload["id"])
    try:
        _client(payload["url"], payload["provider_model"]).complete(
            "", [Message(role="user", content=payload["id"])], max_tokens=16
        )
    except ProviderError as e:
        _log(payload["log"], ev="error", id=payload["id"], error_class=e.error_class)
        raise
    try:
        os.close(os.open(os.path.join(payload["marks"], payload["id"]), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        fresh = True
    except FileExistsError:
        fresh = False
    _log(payload["log"], ev="record", id=payload["id"], fresh=fresh)
    return "recorded"


if __name__ == "__main__":
    worker_main(*sys.argv[1:5])
