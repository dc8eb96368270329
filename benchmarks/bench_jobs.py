"""Job bodies and a worker entry point shared by the benchmarks (imported by worker processes, which get
benchmarks/ on PYTHONPATH). Not a benchmark itself: `make bench` does not run it.

`flaky` fails its first run when asked to, each side detecting "first run" from its own worker's memory
(RQ: the job's retries_left; envqa: the claim's execution count), so neither side pays an extra Redis
command for it.
"""

from __future__ import annotations

import sys


class FlakyFailure(ConnectionError):
    """A transient failure (a ConnectionError: envqa's policy retries it; RQ retries per Retry(max=1))."""


def flaky(payload: dict | None = None) -> None:
    if not (payload or {}).get("fail"):
        return
    from envqa.scheduler.worker import current_claim

    claim = current_claim()
    if claim is not None:
        first = claim.executions == 1
    else:
        from rq import get_current_job

        job = get_current_job()
        first = job is not None and job.retries_left == 1
    if first:
        raise FlakyFailure("fails once (simulated)")


def worker_main(side: str, url: str, queues: str, settings_json: str) -> None:
    """A burst worker that waits for the go signal (`BLPOP bench:go`) after start-up, so imports and
    registration are outside the timed part."""
    from redis import Redis

    conn = Redis.from_url(url)
    names = queues.split(",")
    if side == "rq":
        from rq import Queue
        from rq.worker import SimpleWorker

        worker = SimpleWorker([Queue(q, connection=conn) for q in names], connection=conn)
    else:
        from envqa.core.config import SchedulerSettings
        from envqa.scheduler.worker import QAWorker

        worker = QAWorker(names, connection=conn, settings=SchedulerSettings.model_validate_json(settings_json))
    conn.incr("bench:ready")
    conn.blpop(["bench:go"], timeout=120)
    worker.work(burst=True, logging_level="ERROR")



# --- the scheduler benchmark's simulated provider ---------------------------------------------------
# A fake model provider shared by both sides through Redis: it serves at most `limit` calls of a model at
# once and answers 429 (Retry-After) beyond that, answers 429 to everything during a storm, and fails a
# call once with a 500 when told to. envqa's side raises (its worker parks or retries); the stock-RQ side
# does what a user without our layer does: sleep Retry-After (or a short backoff) in the job and retry.
OVER_LIMIT_RETRY_AFTER = 1.0
BASELINE_500_BACKOFF = 0.05


def _log(path: str, **event) -> None:
    import json
    import os
    import time

    line = json.dumps({"pid": os.getpid(), "t": time.time(), **event}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _provider_once(conn, p: dict) -> None:
    import time

    from envqa.core.errors import RateLimited, TransientProviderError

    now = time.time()
    if p.get("storm_until") and now < p["storm_until"]:
        raise RateLimited("429 (simulated storm)", retry_after=p["storm_until"] - now, model=p["model"])
    key = f"prov:inflight:{p['model']}"
    if conn.incr(key) > p["limit"]:
        conn.decr(key)
        raise RateLimited("429 (simulated: over the provider's limit)", retry_after=OVER_LIMIT_RETRY_AFTER,
                          model=p["model"])
    try:
        if p.get("fail_first") and conn.set(f"prov:failed:{p['id']}", 1, nx=True):
            time.sleep(p["latency"] / 4)
            raise TransientProviderError("500 (simulated)", model=p["model"])
        time.sleep(p["latency"])
    finally:
        conn.decr(key)


def provider_call(payload: dict) -> str:
    import time

    from redis import Redis

    from envqa.core.errors import RateLimited, TransientProviderError

    conn = Redis.from_url(payload["redis_url"])
    _log(payload["log"], ev="start", id=payload["id"])
    while True:
        try:
            _provider_once(conn, payload)
            break
        except RateLimited as e:
            if payload["mode"] == "ours":
                raise
            time.sleep(e.retry_after)
        except TransientProviderError:
            if payload["mode"] == "ours":
                raise
            time.sleep(BASELINE_500_BACKOFF)
    fresh = bool(conn.set(f"prov:recorded:{payload['id']}", 1, nx=True))
    _log(payload["log"], ev="record", id=payload["id"], fresh=fresh)
    return "recorded"


if __name__ == "__main__":
    worker_main(*sys.argv[1:5])
