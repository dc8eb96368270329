"""The Slack notifier behind envqa.core.notify (registered at import, by the app): posts the approval request and threads the follow-ups.

Why a background thread: a run must never wait on Slack. `SlackNotifier.__call__` only queues the
message; one daemon thread per process delivers them in order (so a follow-up always finds the thread
its approval message started). Each message has its own time budget (`[slack] send_budget_sec`, see
app/slack/client.py); when it runs out, or the process ends before `flush()` drained the queue within
`[slack] flush_timeout_sec`, the notification is recorded as failed and the report lists it.

Where messages go:
- "awaiting_approval" posts the proposal with its buttons (the run's thread root, or a broadcast reply in
  the thread when the run already has one) and attaches the full diff as a file in the thread.
- "gate_result", "adopted", "budget_stop" reply in the run's thread when it has one.
- "run_finished" / "run_incomplete" reply in the thread (broadcast to the channel); a run without a thread
  posts them only when `[slack] notify` names its outcome ("findings", "incomplete", "clean").
"""

from __future__ import annotations

import atexit
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from envqa.app.slack.blocks import approval_message, follow_up_text
from envqa.app.slack.client import SlackUnavailable, describe, scrub, web_client
from envqa.core.config import QAConfig
from envqa.store.db import Store

log = structlog.get_logger("envqa.app.slack")
FailureRecorder = Callable[[QAConfig, str, str, dict, str], None]  # (config, run_id, kind, payload, error)


def _open_store(config: QAConfig):
    return Store(config.db_path)


@dataclass
class _Job:
    notifier: SlackNotifier
    kind: str
    payload: dict


class _Outbox:
    """One ordered delivery thread per process; `flush` waits for it with a deadline."""

    def __init__(self) -> None:
        self._queue: queue.Queue[_Job] = queue.Queue()
        self._pending = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def put(self, job: _Job) -> None:
        with self._cond:
            self._pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="envqa-slack", daemon=True)
                self._thread.start()
        self._queue.put(job)

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                job.notifier.deliver(job.kind, job.payload)
            finally:
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()

    def flush(self, timeout: float) -> bool:
        """Wait until every queued message is delivered or failed; False when `timeout` ran out first."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def abandon(self) -> list[_Job]:
        """Take what is still queued (not the message in flight) so it can be recorded as failed."""
        jobs = []
        while True:
            try:
                jobs.append(self._queue.get_nowait())
            except queue.Empty:
                return jobs


OUTBOX = _Outbox()
_exit_hook = threading.Lock()
_exit_registered = False


def flush(timeout: float) -> bool:
    """Give queued Slack messages up to `timeout` seconds; record the ones still queued as failed."""
    if OUTBOX.flush(timeout):
        return True
    for job in OUTBOX.abandon():
        job.notifier.failed(job.kind, job.payload, f"not sent within {timeout:g}s of the run's end")
        with OUTBOX._cond:
            OUTBOX._pending -= 1
    return False


class SlackNotifier:
    """What `notify_slack` sends through when `[slack] channel` is set."""

    def __init__(self, config: QAConfig, record_failure: FailureRecorder | None = None):
        self.config = config
        self.settings = config.slack
        self._record_failure = record_failure

    # -- called by the run: never blocks, never raises --------------------------------------------------
    def __call__(self, kind: str, payload: dict) -> None:
        global _exit_registered
        with _exit_hook:
            if not _exit_registered:  # a process that ends (exit 4, a finished run) gives Slack a bounded time
                atexit.register(flush, self.settings.flush_timeout_sec)
                _exit_registered = True
        OUTBOX.put(_Job(self, kind, dict(payload)))

    def failed(self, kind: str, payload: dict, error: str) -> None:
        error = scrub(error)
        log.warning("slack_notification_failed", run_id=payload.get("run_id"), kind=kind, error=error)
        if self._record_failure is not None:
            try:
                self._record_failure(self.config, str(payload.get("run_id")), kind, payload, error)
            except Exception as e:  # noqa: BLE001 - recording is best effort too: the run goes on
                log.warning("slack_failure_not_recorded", kind=kind, error=scrub(str(e)))

    # -- the delivery thread --------------------------------------------------------------------------------
    def deliver(self, kind: str, payload: dict) -> None:
        try:
            if kind == "awaiting_approval":
                self._post_approval(payload)
            else:
                self._post_follow_up(kind, payload)
        except Exception as e:  # noqa: BLE001 - SlackApiError, SlackUnavailable, connection errors: recorded, never raised
            self.failed(kind, payload, describe(e))

    def _post_approval(self, payload: dict) -> None:
        if "approval" not in self.settings.notify:
            return
        run_id, proposal = str(payload["run_id"]), payload.get("proposal") or {}
        proposal_id = str(proposal.get("proposal_id", ""))
        store = _open_store(self.config)
        if store.slack_message(run_id, f"proposal:{proposal_id}"):
            return  # already posted (a resumed graph re-notifies the same checkpoint)
        message = approval_message(_with_report_facts(store, _named(store, payload)), self.settings.report_base_url)
        thread = store.slack_message(run_id, "thread")
        client = web_client(self.settings)
        extra = {"thread_ts": thread[1], "reply_broadcast": True} if thread else {}
        resp = client.chat_postMessage(channel=self.settings.channel, **message, **extra)
        channel, ts = resp["channel"], resp["ts"]
        store.save_slack_message(run_id, f"proposal:{proposal_id}", channel, ts)
        if not thread:
            store.save_slack_message(run_id, "thread", channel, ts)
        diff = proposal.get("diff") or ""
        if diff:
            web_client(self.settings).files_upload_v2(
                channel=channel,
                thread_ts=thread[1] if thread else ts,
                content=diff,
                filename=f"{proposal_id or run_id}.diff",
                title=f"full diff of proposal {proposal_id}",
                initial_comment=f"Full diff of proposal `{proposal_id}`",
            )

    def _post_follow_up(self, kind: str, payload: dict) -> None:
        run_id = str(payload["run_id"])
        store = _open_store(self.config)
        thread = store.slack_message(run_id, "thread")
        final = kind in ("run_finished", "run_incomplete")
        if thread is None and not (final and self._wanted_without_thread(kind, payload)):
            return
        text = follow_up_text(kind, _named(store, payload))
        extra = {"thread_ts": thread[1], "reply_broadcast": final} if thread else {}
        resp = web_client(self.settings).chat_postMessage(channel=self.settings.channel, text=text, **extra)
        if thread is None:
            store.save_slack_message(run_id, "thread", resp["channel"], resp["ts"])

    def _wanted_without_thread(self, kind: str, payload: dict) -> bool:
        verdict = payload.get("verdict")
        verdict = verdict.get("verdict") if isinstance(verdict, dict) else verdict
        outcome = (
            "incomplete"
            if kind == "run_incomplete" or verdict == "incomplete"
            else ("clean" if verdict in ("clean", "in_band") else "findings")
        )
        return outcome in self.settings.notify


def _with_report_facts(store, payload: dict) -> dict:
    """The checkpoint's report (stored just before this notification) has the iteration and the findings
    with their labels; the notification payload may not carry them."""
    if ("iteration" in payload and "findings" in payload) or not payload.get("run_id"):
        return payload
    report = store.run_report(payload["run_id"])
    if report is None:
        return payload
    pending = report.get("awaiting_approval") or {}
    return {
        "iteration": pending.get("iteration", report.get("iterations")),
        "findings": report.get("findings"),
        **payload,
    }


def _named(store, payload: dict) -> dict:
    """A version snapshot's directory is named by its hash; show the name of the user's directory instead."""
    name = str(payload.get("env_name") or "")
    if name and not re.fullmatch(r"[0-9a-f]{32,64}", name):
        return payload
    row = store.get_run(str(payload.get("run_id"))) or {}
    return {**payload, "env_name": Path(row["env_dir"]).name} if row.get("env_dir") else payload


def record_failure(config: QAConfig, run_id: str, kind: str, payload: dict, error: str) -> None:
    """A row of its own (key `slack:<ref>`) beside notify's: the report lists every row not `sent`."""
    ref = (
        payload.get("proposal_id") or (payload.get("proposal") or {}).get("proposal_id") or payload.get("version") or ""
    )
    _open_store(config).record_notification(run_id, kind, f"slack:{ref}", "failed", f"slack: {error}")


def notify_slack(config: QAConfig, kind: str, payload: dict) -> None:
    """What the Slack notifier registered by envqa.app.slack calls: queue the message and return at once."""
    SlackNotifier(config, record_failure)(kind, payload)


__all__ = ["OUTBOX", "SlackNotifier", "SlackUnavailable", "flush", "notify_slack"]
