"""What happens when a run's graph stops at its approval interrupt.

The run's status becomes `awaiting_approval`, its report so far (verdict `awaiting_approval`, the proposal
in full) is written, and the `awaiting_approval` notification goes out once per proposal. With an `ask`
callback (`--approval prompt`) the answer is recorded and the graph resumed on the spot, as many times as
it stops (an edit is gated and asked about again); without one the caller exits 4 and the state waits in
the checkpointer for `qa approve|reject RUN_ID`.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.types import Command

from envqa.app.approvals import check_edit
from envqa.app.report_html import try_write_html_report
from envqa.core.errors import PatchError
from envqa.core.layout import RunLayout
from envqa.core.notify import notify
from envqa.core.run_deps import RunDeps
from envqa.core.statuses import RunStatus
from envqa.graphs.loop_report import awaiting_report

Ask = Callable[[dict], dict]


def pending_payload(graph, thread) -> dict | None:
    """The payload of the interrupt the run is waiting at, or None."""
    snap = graph.get_state(thread)
    return next((i.value for i in snap.interrupts), None)


def settle_checkpoints(graph, thread, deps: RunDeps, ask: Ask | None = None) -> dict:
    while True:
        payload = pending_payload(graph, thread)
        state = graph.get_state(thread).values
        if payload is None:
            return state
        run_id, pid = state["run_id"], payload["proposal"]["proposal_id"]
        deps.store.set_loop(run_id, pending_proposal=pid)
        awaiting_report(deps, state, payload)
        try_write_html_report(deps.config, run_id)  # the HTML view exists before anyone is asked (#14)
        report_path = RunLayout(deps.config.runs_dir, run_id).root / "report.json"
        notify(
            deps.config,
            "awaiting_approval",
            {
                "run_id": run_id,
                "env_name": state.get("env_name"),
                "version": state.get("version"),
                "proposal": payload["proposal"],
                "sweep": payload.get("sweep"),
                "report_path": str(report_path),
            },
            store=deps.store,
            key=pid,
        )
        if ask is None:
            return state
        answer = ask(payload)
        while answer["action"] == "edit" and (refused := _edit_refusal(deps, run_id, pid, answer)):
            answer = ask({**payload, "edit_refused": refused})  # asked again; nothing was recorded
        deps.store.record_approval(
            run_id, pid, answer["action"], answer["approver"], answer.get("reason"), answer.get("patch")
        )
        deps.store.set_run_status(run_id, RunStatus.RUNNING)
        deps.store.set_loop(run_id, pending_proposal=None)
        graph.invoke(Command(resume=answer), thread)


def _edit_refusal(deps: RunDeps, run_id: str, pid: str, answer: dict) -> str | None:
    """Why a replacement patch typed at the prompt is refused (it does not apply, or leaves the task), else None."""
    try:
        check_edit(
            deps.config, deps.store, run_id, pid, answer.get("patch") or "", answer["approver"], answer.get("reason")
        )
    except PatchError as e:
        return str(e)
    return None
