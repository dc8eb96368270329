"""Decisions on a run waiting at its approval checkpoint, for the CLI (`qa approve|reject`) and Slack.

`pending` reads the checkpoint's payload from the store (no graph, no Docker). `decide` records who
decided what and when, first decision wins: a second decision on the same proposal returns
`already_decided=True` with the first one and changes nothing. An edit's patch is applied (and so
checked) before it is recorded: a patch that does not apply is refused with exit 2 and nothing stored.
`continue_run` (envqa.app.resume) resumes the graph with the recorded decision, in this process or, with Redis and
`detach`, as a job on the `control` queue. Only one caller continues a run: the status change from
`awaiting_approval` to `running` is the claim.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from envqa.core.config import QAConfig
from envqa.core.errors import InputError
from envqa.core.statuses import RunStatus
from envqa.store.db import Store
from envqa.store.postgres import store_exists
from envqa.store.versions import VersionStore

Action = Literal["approve", "reject", "edit"]


class DecisionOutcome(BaseModel):
    run_id: str
    proposal_id: str
    action: str
    approver: str
    reason: str | None = None
    decided_at: datetime
    already_decided: bool = False
    spec_conflicts: list[str] = []  # the proposal contradicts the task's spec: what the approver decided on


def spec_conflicts(store: Store, proposal_id: str | None) -> list[str]:
    """Why the proposal is flagged as contradicting its task's spec (issue 13); [] when it is not."""
    proposal = store.get_proposal(proposal_id) if proposal_id else None
    check = proposal.spec_check if proposal else None
    return check.reasons() if check and check.flagged else []


def open_store(config: QAConfig) -> Store:
    if not store_exists(config.db_path):
        raise InputError(str(config.db_path), "no state database here (set QA_HOME to the runs' directory)")
    return Store(config.db_path)


def run_row(store: Store, config: QAConfig, run_id: str) -> dict:
    row = store.get_run(run_id)
    if row is None:
        raise InputError(str(config.db_path), f"no run with id {run_id!r}")
    return row


def pending(config: QAConfig, run_id: str) -> dict | None:
    """The interrupt payload (proposal, diff, gate, sweep so far) of a run awaiting approval, else None."""
    store = open_store(config)
    row = run_row(store, config, run_id)
    report = store.run_report(run_id)
    if row["status"] != RunStatus.AWAITING_APPROVAL or report is None:
        return None
    return report.get("awaiting_approval")


def last_proposal_id(store: Store, run_id: str) -> str | None:
    loop = store.get_loop(run_id) or {}
    if loop.get("pending_proposal"):
        return loop["pending_proposal"]
    decided = store.approvals_for_run(run_id)
    return decided[-1]["proposal_id"] if decided else None


def decide(
    config: QAConfig, run_id: str, action: Action, approver: str, reason: str | None = None, patch: str | None = None
) -> DecisionOutcome:
    if action not in ("approve", "reject", "edit"):
        raise InputError("action", f"unknown action {action!r} (approve, reject, edit)")
    if action == "edit" and not (patch or "").strip():
        raise InputError("--edit", "an edit needs a replacement patch (a unified diff)")
    store = open_store(config)
    row = run_row(store, config, run_id)
    pid = last_proposal_id(store, run_id)
    first = store.get_approval(run_id, pid) if pid else None
    if first is not None:
        return DecisionOutcome(
            **{k: first[k] for k in ("run_id", "proposal_id", "action", "approver", "reason")},
            decided_at=datetime.fromisoformat(first["decided_at"]),
            already_decided=True,
            spec_conflicts=spec_conflicts(store, pid),
        )
    if row["status"] != RunStatus.AWAITING_APPROVAL or pid is None:
        raise InputError(run_id, f"the run is not awaiting approval (status: {row['status']})")
    if action == "edit":  # check the patch now: a refusal (exit 2) must leave no decision behind
        check_edit(config, store, run_id, pid, patch, approver, reason)
    stored, inserted = store.record_approval(run_id, pid, action, approver, reason, patch if action == "edit" else None)
    return DecisionOutcome(
        **{k: stored[k] for k in ("run_id", "proposal_id", "action", "approver", "reason")},
        decided_at=datetime.fromisoformat(stored["decided_at"]),
        already_decided=not inserted,
        spec_conflicts=spec_conflicts(store, pid),
    )


def check_edit(
    config: QAConfig, store: Store, run_id: str, proposal_id: str, patch: str, approver: str, reason: str | None
) -> None:
    """A replacement patch must apply to the proposal's parent before it is recorded (PatchError, exit 2,
    otherwise): a recorded edit that cannot apply would fail the resumed run on every resume. The version
    it makes is content-addressed, so the approve node's own apply later finds it and writes nothing."""
    proposal = store.get_proposal(proposal_id)
    VersionStore(config, store).apply_patch(
        proposal.parent_version,
        patch,
        author=f"human:{approver}",
        reason=reason or f"edit of {proposal_id}",
        run_id=run_id,
    )


def run_config(store: Store, run_id: str, config: QAConfig) -> QAConfig:
    """The configuration the run was started with (its models, trials, oracle runs), in this QA_HOME."""
    stored = (store.get_loop(run_id) or {}).get("config_json")
    if not stored:
        return config
    return QAConfig.model_validate_json(stored).model_copy(update={"home": config.home})
