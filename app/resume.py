"""Resume a decided run (`qa approve|reject`, Slack's buttons): in this process, or with Redis as a continuation
job on the `control` queue that any `qa worker` picks up. The decision itself is recorded by envqa.app.approvals."""

from __future__ import annotations

from envqa.app.approvals import last_proposal_id, open_store, run_config, run_row
from envqa.app.runner import execute_run
from envqa.core.config import QAConfig
from envqa.core.errors import InputError
from envqa.core.statuses import RunStatus
from envqa.scheduler.control import enqueue_graph
from envqa.scheduler.executors import redis_url


def continue_run(config: QAConfig, run_id: str, *, detach: bool, quiet: bool = True, console=None, ask=None) -> dict:
    """Resume a decided run. Returns the report (in-process), {"enqueued": job_id} (detached), or
    {"continued": False, "status": ...} when another process already continues it."""
    store = open_store(config)
    row = run_row(store, config, run_id)
    pid = last_proposal_id(store, run_id)
    decision = store.get_approval(run_id, pid) if pid else None
    if decision is None:
        raise InputError(run_id, "no decision recorded yet: `qa approve RUN_ID` or `qa reject RUN_ID --reason TEXT`")
    if not store.set_run_status(run_id, RunStatus.RUNNING, only_from=(RunStatus.AWAITING_APPROVAL,)):
        return {"continued": False, "status": row["status"], "run_id": run_id}
    store.set_loop(run_id, pending_proposal=None)
    config = run_config(store, run_id, config)
    answer = {k: decision[k] for k in ("action", "approver", "reason", "patch")}
    if detach and redis_url(config):
        return {"enqueued": enqueue_graph(config, run_id, kind=f"continue-{pid}", answer=answer), "run_id": run_id}
    return execute_run(None, config, run_id, resume=True, quiet=quiet, console=console, answer=answer, ask=ask)
