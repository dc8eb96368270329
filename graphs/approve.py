"""The approve node: a human (or `--approval auto`) decides on a gated proposal at a LangGraph interrupt.

LangGraph re-runs a node from its start on resume, so everything before `interrupt()` here only reads
(the proposal was computed and gated by earlier nodes). The answer lives in the store's `approvals`
table, first decision wins: `qa approve` / `qa reject` (envqa.app.approvals) record it before they resume the
graph, so a decision already stored is acted on without asking again (also after a crash), and an answer
given at the interrupt is recorded idempotently.

approve -> adopt; reject -> report (the run ends, the reason kept); edit -> the human's patch becomes a
new proposal on the same parent and goes through the gate again.

`--approval auto` adopts a gated proposal without asking, except one flagged as contradicting the spec
of a generated task (Proposal.spec_check, issue 13): that one always waits for a human.
"""

from __future__ import annotations

import structlog
from langgraph.types import interrupt

from envqa.core.run_deps import RunDeps
from envqa.graphs.loop_state import versions_of
from envqa.probes.static.spec_consistency import check_revision

log = structlog.get_logger(__name__)


def approval_payload(deps: RunDeps, state) -> dict:
    """What the human sees: the proposal with its diff, gate evidence, findings addressed, expected effect,
    and the sweep figures so far (every version's)."""
    proposal = deps.store.get_proposal(state["proposal_id"])
    return {
        "run_id": state["run_id"],
        "env_name": state.get("env_name"),
        "version": state["version"],
        "iteration": state.get("iteration", 0),
        "request": state.get("request"),
        "proposal": proposal.model_dump(mode="json"),
        "diff": proposal.diff,
        "gate": proposal.gate.model_dump(mode="json") if proposal.gate else None,
        "addresses": proposal.addresses,
        "expected_effect": proposal.expected_effect,
        "spec_check": proposal.spec_check.model_dump(mode="json") if proposal.spec_check else None,
        "sweep": state.get("sweep"),
        "band": (state.get("decision") or {}).get("band"),
        "history": state.get("history", []),
    }


def approve_node(deps: RunDeps, state) -> dict:
    run_id, pid = state["run_id"], state["proposal_id"]
    mode = state.get("approval_mode") or "wait"
    recorded = deps.store.get_approval(run_id, pid)  # decided already (qa approve, or before a crash)
    if recorded is not None:
        answer = recorded
    elif mode == "auto" and not _contradicts_spec(deps, pid):
        answer = {"action": "approve", "approver": "auto", "reason": "--approval auto"}
    else:
        answer = interrupt(approval_payload(deps, state))  # raises the first time; the resume value after
    decision, _ = deps.store.record_approval(
        run_id, pid, answer["action"], answer.get("approver") or "unknown", answer.get("reason"), answer.get("patch")
    )
    proposal = deps.store.get_proposal(pid)
    action = decision["action"]
    log.info("approve", run_id=run_id, proposal_id=pid, action=action, approver=decision["approver"])
    if action == "approve":
        deps.store.save_proposal(proposal.model_copy(update={"status": "approved"}))
        return {"approval": decision}
    if action == "reject":
        deps.store.save_proposal(proposal.model_copy(update={"status": "rejected"}))
        return {
            "approval": decision,
            "stop_reason": f"rejected by {decision['approver']}: {decision['reason'] or ''}".rstrip(": "),
        }
    # edit: the human's patch replaces the proposal's (on the same parent) and is gated again
    info = versions_of(deps).apply_patch(
        proposal.parent_version,
        decision["patch"],
        author=f"human:{decision['approver']}",
        reason=decision["reason"] or f"edit of {pid}",
        run_id=run_id,
    )
    edited = proposal.model_copy(
        update={
            "proposal_id": f"{pid}-edit",
            "candidate_version": info.version,
            "diff": info.patch or decision["patch"],
            "author": f"human:{decision['approver']}",
            "attempt": proposal.attempt + 1,
            "status": "proposed",
            "gate": None,
            "rationale": f"human edit of {pid}" + (f": {decision['reason']}" if decision["reason"] else ""),
            "spec_check": check_revision(
                versions_of(deps).path(proposal.parent_version), versions_of(deps).path(info.version)
            ),
        }
    )  # the human's own patch, checked anew
    deps.store.save_proposal(edited)
    deps.store.save_proposal(proposal.model_copy(update={"status": "dropped"}))
    return {"approval": decision, "proposal_id": edited.proposal_id, "gate_passed": None, "gate_feedback": None}


def _contradicts_spec(deps: RunDeps, proposal_id: str) -> bool:
    proposal = deps.store.get_proposal(proposal_id)
    flagged = bool(proposal and proposal.spec_check and proposal.spec_check.flagged)
    if flagged:
        log.info("approve.spec_flagged", proposal_id=proposal_id, reasons=proposal.spec_check.reasons())
    return flagged


def route_after_approve(state) -> str:
    action = (state.get("approval") or {}).get("action")
    return {"approve": "adopt", "edit": "gate"}.get(action or "", "report")
