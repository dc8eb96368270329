"""Block Kit for envqa's Slack messages: the approval request, its decided form, and thread follow-ups.

Pure functions from notification payloads (envqa.core.notify kinds) to message dicts, so the layout can be
read and tested without Slack. Slack limits a section's text to 3000 characters; long parts are cut with
a note, and the full diff travels as a file instead (app/slack/notifier.py).
"""

from __future__ import annotations

import json
from typing import Any

from envqa.app.approval_prompt import spec_conflict_lines
from envqa.core.defaults import SLACK_DIFF_EXCERPT_LINES as DIFF_EXCERPT_LINES

APPROVE_ACTION = "envqa_approve"
REJECT_ACTION = "envqa_reject"
SECTION_LIMIT = 2900


def _cut(text: str, limit: int = SECTION_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 20].rstrip() + "\n… (cut)"


def _section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _cut(text)}}


def _pct(x: Any) -> str:
    return f"{x:.0%}" if isinstance(x, (int, float)) else "–"


def report_link(report_base_url: str | None, run_id: str) -> str | None:
    return f"{report_base_url.rstrip('/')}/runs/{run_id}/report.html" if report_base_url else None


def button_value(run_id: str, proposal_id: str) -> str:
    return json.dumps({"run_id": run_id, "proposal_id": proposal_id}, separators=(",", ":"))


def pass_rate_lines(sweep: dict | None) -> str:
    """One line per model: passes/n, pass@1 with its interval, and where that lies against the band."""
    if not sweep or not sweep.get("models"):
        return "_no solver sweep (no models configured)_"
    low, high = (sweep.get("band") or [None, None])[:2]
    lines = [f"band {_pct(low)}–{_pct(high)}"]
    for model, m in sweep["models"].items():
        lines.append(
            f"• `{model}`: {m.get('passes', 0)}/{m.get('n', 0)} = {_pct(m.get('pass_at_1'))} "
            f"(CI {_pct(m.get('ci_low'))}–{_pct(m.get('ci_high'))}) → {m.get('band_decision') or '?'}"
        )
    return "\n".join(lines)


def findings_lines(proposal: dict, findings: list[dict] | None) -> str:
    """The rules the proposal addresses, each with the label of its finding (or the proposal's labels)."""
    by_rule = {f.get("rule"): f for f in findings or []}
    lines = []
    for rule in proposal.get("addresses") or []:
        f = by_rule.get(rule) or {}
        label = f.get("label") or ", ".join(proposal.get("labels") or []) or "unlabeled"
        message = f" — {f['message']}" if f.get("message") else ""
        lines.append(f"• `{rule}` [{label}]{message}")
    return "\n".join(lines) or "_no finding named_"


def gate_lines(gate: dict | None) -> str:
    if not gate:
        return "_not gated_"
    head = "*gate passed*" if gate.get("passed") else "*gate failed*"
    checks = [
        f"{'✅' if c.get('passed') else '❌'} {c.get('name')}: {c.get('detail') or ''}".rstrip(": ")
        for c in gate.get("checks") or []
    ]
    return "\n".join([head, *checks])


def spec_conflict_text(proposal: dict) -> str:
    """Issue 13: the warning on a revision that contradicts the spec its task was generated from."""
    lines = spec_conflict_lines(proposal)
    return (":warning: *" + lines[0] + "*\n" + "\n".join(lines[1:])) if lines else ""


def diff_excerpt(diff: str) -> str:
    lines = diff.splitlines()
    shown = "\n".join(lines[:DIFF_EXCERPT_LINES])
    more = (
        f"\n… {len(lines) - DIFF_EXCERPT_LINES} more lines in the attached file"
        if len(lines) > DIFF_EXCERPT_LINES
        else ""
    )
    body = _cut(shown.replace("```", "`\u200b``"), SECTION_LIMIT - len(more) - 10)
    return f"```\n{body}\n```{more}"


def approval_message(payload: dict, report_base_url: str | None) -> dict:
    """The checkpoint message: what is proposed, why, the evidence, and the two buttons."""
    run_id, proposal = payload["run_id"], payload.get("proposal") or {}
    proposal_id = proposal.get("proposal_id", "")
    version = str(payload.get("version") or "")
    env = payload.get("env_name") or "environment"
    header = f"Revision proposed for {env}"
    facts = (
        f"*Environment* `{env}` @ `{version[:12]}`   *Iteration* {payload.get('iteration', '?')}\n"
        f"*Run* `{run_id}`   *Proposal* `{proposal_id}` by {proposal.get('author', '?')}"
    )
    blocks: list[dict] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(header, 150)}},
        _section(facts),
        _section("*Findings addressed*\n" + findings_lines(proposal, payload.get("findings"))),
    ]
    conflicts = spec_conflict_text(proposal)
    if conflicts:
        header += " (contradicts its spec)"
        blocks[0] = {"type": "header", "text": {"type": "plain_text", "text": _cut(header, 150)}}
        blocks.insert(1, _section(conflicts))
    if proposal.get("rationale") or proposal.get("expected_effect"):
        effect = "\n".join(f"• {e}" for e in proposal.get("expected_effect") or [])
        blocks.append(_section(f"*Why* {proposal.get('rationale', '')}\n{effect}".strip()))
    blocks += [
        _section("*Pass rate so far*\n" + pass_rate_lines(payload.get("sweep"))),
        _section("*Gate evidence*\n" + gate_lines(proposal.get("gate"))),
        _section("*Diff*\n" + diff_excerpt(proposal.get("diff") or "")),
    ]
    value = button_value(run_id, proposal_id)
    buttons: list[dict] = [
        {
            "type": "button",
            "action_id": APPROVE_ACTION,
            "style": "primary",
            "value": value,
            "text": {"type": "plain_text", "text": "Approve"},
        },
        {
            "type": "button",
            "action_id": REJECT_ACTION,
            "style": "danger",
            "value": value,
            "text": {"type": "plain_text", "text": "Reject"},
        },
    ]
    link = report_link(report_base_url, run_id)
    if link:
        buttons.append(
            {
                "type": "button",
                "action_id": "envqa_report",
                "url": link,
                "text": {"type": "plain_text", "text": "Open report"},
            }
        )
    blocks.append({"type": "actions", "block_id": "envqa_decision", "elements": buttons})
    text = f"{header} (run {run_id}, proposal {proposal_id}): approve or reject in Slack or with `qa approve {run_id}`"
    return {"text": text, "blocks": blocks}


def decided_message(original_blocks: list[dict], action: str, approver: str, when: str) -> dict:
    """The original message with its buttons replaced by who decided what (the report link stays)."""
    verb = {"approve": "Approved", "reject": "Rejected", "edit": "Edited"}.get(action, action)
    mark = "✅" if action == "approve" else "❌" if action == "reject" else "✏️"
    who = f"<@{approver.removeprefix('slack:')}>" if approver.startswith("slack:") else f"`{approver}`"
    note = {"type": "context", "elements": [{"type": "mrkdwn", "text": f"{mark} *{verb}* by {who} at {when}"}]}
    kept: list[dict] = []
    for block in original_blocks or []:
        if block.get("type") == "actions":
            links = [e for e in block.get("elements", []) if e.get("url")]
            if links:
                kept.append({**block, "elements": links})
            continue
        kept.append(block)
    return {"text": f"{verb} by {approver}", "blocks": [*kept, note]}


def follow_up_text(kind: str, payload: dict) -> str:
    """A thread reply for the notification kinds after the checkpoint."""
    run_id, env = payload.get("run_id"), payload.get("env_name") or "environment"
    version = str(payload.get("version") or "")[:12]
    if kind == "gate_result":
        gate = payload.get("gate") or (payload.get("proposal") or {}).get("gate")
        return f"Gate for `{env}` candidate `{version}`:\n" + gate_lines(gate)
    if kind == "adopted":
        return f"Adopted: `{env}` is now at version `{version}` (iteration {payload.get('iteration', '?')}); re-validating."
    if kind == "budget_stop":
        return f"Budget stop on run `{run_id}`: {payload.get('reason') or payload.get('stop_reason') or 'a cap was reached'}"
    if kind == "run_incomplete":
        why = payload.get("reason") or payload.get("stop_reason") or "infrastructure failure"
        return f"Run `{run_id}` on `{env}` could not finish: {why}"
    verdict = payload.get("verdict")
    verdict = verdict.get("verdict") if isinstance(verdict, dict) else verdict
    stop = payload.get("stop_reason")
    findings = payload.get("findings") or []
    rules = ", ".join(sorted({f.get("rule", "?") for f in findings if isinstance(f, dict)}))
    return (
        f"Run `{run_id}` on `{env}` finished: *{verdict or '?'}* at version `{version}`"
        + (f" ({stop})" if stop else "")
        + (f"\nopen findings: {rules}" if rules else "")
    )
