"""The adopt node: the approved candidate becomes the current version, and the loop starts over on it.

The current version's findings, trials, infra notes, sweep and labels are reset (they stay in the store
and in `history`), so the next `validate -> sweep -> analyze -> hunt -> decide` pass judges the new
version on its own evidence. Re-running this node (a crash right after it) changes nothing further.
"""

from __future__ import annotations

import structlog

from envqa.core.events import RunEvent
from envqa.core.notify import notify
from envqa.core.run_deps import RunDeps
from envqa.graphs.loop_state import current_env, fresh

log = structlog.get_logger(__name__)


def adopt_node(deps: RunDeps, state) -> dict:
    run_id = state["run_id"]
    proposal = deps.store.get_proposal(state["proposal_id"])
    new = proposal.candidate_version
    if proposal.status != "adopted":
        deps.store.save_proposal(proposal.model_copy(update={"status": "adopted"}))
    env = current_env(deps, {**state, "version": new})
    deps.store.set_run_env(run_id, env.name, env.version)
    iteration = state.get("iteration", 0) + 1
    deps.store.set_loop(run_id, iteration=iteration, version=new, pending_proposal=None)
    versions = [v for v in state.get("versions", []) if v != new] + [new]
    log.info("adopt", run_id=run_id, version=new[:12], parent=proposal.parent_version[:12], iteration=iteration)
    deps.on_event(RunEvent.ADOPTED, version=new, proposal=proposal)
    notify(
        deps.config,
        "adopted",
        {
            "run_id": run_id,
            "env_name": env.name,
            "version": new,
            "parent": proposal.parent_version,
            "proposal_id": proposal.proposal_id,
            "approval": state.get("approval"),
        },
        store=deps.store,
        key=proposal.proposal_id,
    )
    return {
        "version": new,
        "env_version": new,
        "versions": versions,
        "iteration": iteration,
        "findings": fresh(),
        "trials": fresh(),
        "incomplete": fresh(),
        "inconclusive": fresh(),
        "sweep": None,
        "labels": None,
        "coverage": None,
        "request": None,
        "decision": None,
        "proposal_id": None,
        "gate_passed": None,
        "gate_feedback": None,
        "repairs": 0,
        "approval": None,
    }
