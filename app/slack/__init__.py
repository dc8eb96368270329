"""Slack review of proposed revisions (issue 15): Block Kit messages with Approve/Reject buttons posted at
the approval checkpoint (notifier.py), thread follow-ups, and the signed interactivity endpoint that
`qa serve` mounts (interactivity.py).

Importing this package registers the Slack notifier with envqa.core.notify (app/__init__.py does); the
notifier imports slack_sdk only when `[slack] channel` is set, so runs without Slack never load it."""

from __future__ import annotations

from envqa.core.notify import register


def _slack_notifier(config, kind: str, payload: dict) -> None:
    """Queue the message for `[slack] channel` and return at once; a no-op without one."""
    slack = getattr(config, "slack", None)
    if slack is None or not slack.channel:
        return
    from envqa.app.slack.notifier import notify_slack  # deferred: slack_sdk only for runs that post to Slack

    notify_slack(config, kind, payload)


register("slack", _slack_notifier)
