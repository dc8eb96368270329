"""`POST /slack/interactivity`: an Approve or Reject click on a proposal's message.

Slack wants an answer within 3 seconds and retries otherwise, so the route only verifies the signature
(slack_sdk's SignatureVerifier: HMAC-SHA256 of `v0:timestamp:body` with SLACK_SIGNING_SECRET, requests
older than 5 minutes refused), parses the payload and answers 200; a single decision thread then checks
that the user may decide, records the decision (envqa.app.approvals.decide, idempotent: a retry or a double
click answers "already approved by X" and changes nothing), updates the original message, and resumes
the run (envqa.app.resume.continue_run: an RQ continuation job when REDIS_URL is set, else a thread here).
"""

from __future__ import annotations

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from urllib.parse import parse_qs

import structlog
from pydantic import BaseModel, ValidationError
from slack_sdk.signature import SignatureVerifier
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from envqa.app import approvals
from envqa.app.resume import continue_run
from envqa.app.slack.blocks import APPROVE_ACTION, REJECT_ACTION, decided_message
from envqa.app.slack.client import describe, scrub, signing_secret, web_client, webhook_client
from envqa.core.config import QAConfig
from envqa.core.defaults import SLACK_GROUP_CACHE_SEC as GROUP_CACHE_SEC

log = structlog.get_logger("envqa.app.slack")
ACTIONS = {APPROVE_ACTION: "approve", REJECT_ACTION: "reject"}


class Click(BaseModel):
    """What one button click asks for, taken from Slack's block_actions payload."""

    action: str  # "approve" | "reject"
    run_id: str
    proposal_id: str
    user_id: str
    channel: str | None = None
    message_ts: str | None = None
    message_blocks: list[dict] = []
    response_url: str | None = None


def verified(body: bytes, headers, secret: str) -> bool:
    try:
        return SignatureVerifier(secret).is_valid(
            body, headers.get("x-slack-request-timestamp"), headers.get("x-slack-signature")
        )
    except ValueError:  # a timestamp that is not a number
        return False


def parse_click(body: bytes) -> Click | None:
    """The click, or None for interactions that are not ours (e.g. the report link button)."""
    payload = json.loads(parse_qs(body.decode())["payload"][0])
    if payload.get("type") != "block_actions" or not payload.get("actions"):
        return None
    action = payload["actions"][0]
    if action.get("action_id") not in ACTIONS:
        return None
    value = json.loads(action.get("value") or "{}")
    message = payload.get("message") or {}
    container = payload.get("container") or {}
    return Click(
        action=ACTIONS[action["action_id"]],
        run_id=value["run_id"],
        proposal_id=value["proposal_id"],
        user_id=payload["user"]["id"],
        channel=(payload.get("channel") or {}).get("id") or container.get("channel_id"),
        message_ts=message.get("ts") or container.get("message_ts"),
        message_blocks=message.get("blocks") or [],
        response_url=payload.get("response_url"),
    )


class Decider:
    """Runs clicks one at a time, off the request path; resumed runs get their own threads."""

    def __init__(self, config: QAConfig):
        self.config = config
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="envqa-slack-decide")
        self._groups: dict[str, tuple[float, set[str]]] = {}
        self.resumes: list[threading.Thread] = []

    def submit(self, click: Click) -> None:
        self.pool.submit(self._safe_handle, click)

    def _safe_handle(self, click: Click) -> None:
        try:
            self.handle(click)
        except Exception as e:  # noqa: BLE001 - a click must never take the server down; the CLI still works
            log.error("slack_click_failed", run_id=click.run_id, user=click.user_id, error=describe(e))
            self._tell(click, f"envqa could not record your decision on run `{click.run_id}`: {scrub(str(e))[:300]}")

    # -- who may decide -------------------------------------------------------------------------------------
    def may_decide(self, user_id: str) -> bool:
        approvers = self.config.slack.approvers
        if user_id in approvers:
            return True
        return any(user_id in self._group_members(g) for g in approvers if g.startswith("S"))

    def _group_members(self, group: str) -> set[str]:
        cached = self._groups.get(group)
        if cached and time.monotonic() - cached[0] < GROUP_CACHE_SEC:
            return cached[1]
        try:
            users = set(web_client(self.config.slack, 10.0).usergroups_users_list(usergroup=group).get("users") or [])
        except Exception as e:  # noqa: BLE001 - logged; an unknown group grants nothing
            log.warning("slack_group_lookup_failed", group=group, error=describe(e))
            return set()
        self._groups[group] = (time.monotonic(), users)
        return users

    # -- one click ------------------------------------------------------------------------------------------
    def handle(self, click: Click) -> None:
        if not self.may_decide(click.user_id):
            log.info("slack_click_refused", run_id=click.run_id, user=click.user_id)
            return self._tell(
                click,
                "You are not one of this envqa's approvers (`[slack] approvers`), so your click was not recorded.",
            )
        pending = approvals.pending(self.config, click.run_id)
        pending_id = ((pending or {}).get("proposal") or {}).get("proposal_id")
        if pending is not None and pending_id != click.proposal_id:
            return self._tell(
                click,
                f"Proposal `{click.proposal_id}` is no longer the one waiting on run "
                f"`{click.run_id}` (now `{pending_id}`); nothing was recorded.",
            )
        reason = f"rejected in Slack by <@{click.user_id}>" if click.action == "reject" else None
        outcome = approvals.decide(
            self.config, click.run_id, click.action, approver=f"slack:{click.user_id}", reason=reason
        )
        if outcome.already_decided:
            verb = {"approve": "approved", "reject": "rejected", "edit": "edited"}.get(outcome.action, outcome.action)
            return self._tell(click, f"Already {verb} by {_mention(outcome.approver)}; nothing changed.")
        log.info(
            "slack_decision",
            run_id=click.run_id,
            proposal_id=click.proposal_id,
            action=click.action,
            approver=click.user_id,
        )
        self._update_message(click)
        self._resume(click.run_id)

    def _update_message(self, click: Click) -> None:
        if not (click.channel and click.message_ts):
            return
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        message = decided_message(click.message_blocks, click.action, f"slack:{click.user_id}", when)
        try:
            web_client(self.config.slack).chat_update(channel=click.channel, ts=click.message_ts, **message)
        except Exception as e:  # noqa: BLE001 - the decision stands; only the message is stale
            log.warning("slack_update_failed", run_id=click.run_id, error=describe(e))

    def _resume(self, run_id: str) -> None:
        detach = bool(os.environ.get("REDIS_URL"))
        if detach:  # the workers run the continuation; nothing long happens in this process
            continue_run(self.config, run_id, detach=True)
            return
        thread = threading.Thread(target=self._continue, args=(run_id,), name=f"envqa-resume-{run_id}", daemon=True)
        self.resumes.append(thread)
        thread.start()

    def _continue(self, run_id: str) -> None:
        try:
            continue_run(self.config, run_id, detach=False)
        except BaseException as e:  # noqa: BLE001 - a failed resume is logged; `qa run --resume` retries it
            log.error("resume_failed", run_id=run_id, error=describe(e))

    def _tell(self, click: Click, text: str) -> None:
        """An ephemeral answer to the clicking user only."""
        try:
            if click.response_url:
                webhook_client(click.response_url).send(text=text, response_type="ephemeral", replace_original=False)
            elif click.channel:
                web_client(self.config.slack, 10.0).chat_postEphemeral(
                    channel=click.channel, user=click.user_id, text=text
                )
        except Exception as e:  # noqa: BLE001 - logged; the click's decision stands
            log.warning("slack_ephemeral_failed", run_id=click.run_id, error=describe(e))


def _mention(approver: str) -> str:
    return f"<@{approver.removeprefix('slack:')}>" if approver.startswith("slack:") else f"`{approver}`"


def slack_routes(config: QAConfig) -> tuple[list[Route], Decider]:
    decider = Decider(config)

    async def interactivity(request: Request) -> Response:
        secret = signing_secret()
        if secret is None:
            return JSONResponse({"error": "SLACK_SIGNING_SECRET is not set on this server"}, status_code=503)
        body = await request.body()
        if not verified(body, request.headers, secret):
            log.warning("slack_signature_rejected", client=request.client.host if request.client else None)
            return JSONResponse({"error": "invalid signature or stale timestamp"}, status_code=401)
        try:
            click = parse_click(body)
        except (KeyError, IndexError, TypeError, ValueError, ValidationError, UnicodeDecodeError):
            return JSONResponse({"error": "not a Slack interaction payload"}, status_code=400)
        if click is not None:
            decider.submit(click)
        return Response(status_code=200)

    return [Route("/slack/interactivity", interactivity, methods=["POST"])], decider
