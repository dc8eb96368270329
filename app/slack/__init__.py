"""Slack review of proposed revisions (issue 15): Block Kit messages with Approve/Reject buttons posted at
the approval checkpoint (notifier.py), thread follow-ups, and the signed interactivity endpoint that
`qa serve` mounts (interactivity.py). Kept out of app/notify.py so that runs without `[slack]` never
import slack_sdk."""
