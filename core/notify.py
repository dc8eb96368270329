"""Notifications about a run (awaiting approval, gate result, adopted, finished, budget stop, incomplete).

`notify` fans a payload out to every registered notifier (the log always; Slack when configured: the app
registers it, envqa.app.slack.notifier, so the loop that calls `notify` never knows Slack). It never raises and never
holds the run for long: each notifier runs on a daemon thread with a deadline. Each (run, kind, key) is sent once (a
node re-run after a crash does not notify twice), and a failure is recorded in the store and listed in the report
(`notifications`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import structlog

from envqa.core.defaults import NOTIFY_TIMEOUT_SEC

log = structlog.get_logger(__name__)

KINDS = ("awaiting_approval", "gate_result", "adopted", "run_finished", "budget_stop", "run_incomplete")
Notifier = Callable[..., None]  # notifier(config, kind, payload) -> None; raises on failure
_NOTIFIERS: dict[str, Notifier] = {}


def register(name: str, notifier: Notifier) -> None:
    """Add (or replace) a notifier by name."""
    _NOTIFIERS[name] = notifier


def _log_notifier(config, kind: str, payload: dict) -> None:
    log.info("notify", kind=kind, run_id=payload.get("run_id"), version=(payload.get("version") or "")[:12])


register("log", _log_notifier)


def _call(fn: Notifier, config, kind: str, payload: dict) -> str | None:
    """Run one notifier with a deadline; the error text, or None when it succeeded."""
    outcome: dict = {}

    def target() -> None:
        try:
            fn(config, kind, payload)
            outcome["ok"] = True
        except Exception as e:  # noqa: BLE001 - a notifier's failure must never reach the run
            outcome["error"] = f"{type(e).__name__}: {e}"

    t = threading.Thread(target=target, name=f"envqa-notify-{kind}", daemon=True)
    t.start()
    t.join(NOTIFY_TIMEOUT_SEC)
    if t.is_alive():
        return f"timed out after {NOTIFY_TIMEOUT_SEC:g}s"
    return outcome.get("error")


def notify(config, kind: str, payload: dict, *, store, key: str | None = None) -> None:
    """Send `payload` (run_id, env_name, version, ...) to every notifier; never raises."""
    try:
        run_id = payload.get("run_id") or ""
        dedupe = key or payload.get("version") or ""
        if store.notification_status(run_id, kind, dedupe) == "sent":
            return
        errors = [f"{name}: {e}" for name, fn in list(_NOTIFIERS.items()) if (e := _call(fn, config, kind, payload))]
        store.record_notification(run_id, kind, dedupe, "failed" if errors else "sent", "; ".join(errors) or None)
        if errors:
            log.warning("notify.failed", kind=kind, run_id=run_id, errors=errors)
    except Exception as e:  # noqa: BLE001 - the store itself failing must not stop the run either
        log.warning("notify.error", kind=kind, error=str(e))
