"""`qa run` as a LangGraph StateGraph: the revise loop, checkpointed in SQLite.

    load -> validate -> sweep -> analyze -> hunt -> decide -> report
                ^                                     |
                |                                     v
                +------ adopt <- approve <- gate <- revise   (a failed gate goes back to revise, bounded)

The thread id is the run id, so a run killed halfway resumes from its last finished node
(`qa run --resume RUN_ID`), and trials already recorded in the store are not run again. `approve` is a
LangGraph interrupt: the run stops there (exit 4 in `--approval wait`) until `qa approve|reject RUN_ID`
resumes it, in any process. State is keyed by version (graphs/loop_state.py) and holds only JSON-able
data; the machinery (store, sandbox backend, executor) is passed in as `RunDeps`.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.graph import END, START, StateGraph

from envqa.agents.generator import is_spec_dir
from envqa.core.notify import notify
from envqa.core.run_deps import RunDeps
from envqa.graphs.adopt import adopt_node
from envqa.graphs.analyze import analyze_node
from envqa.graphs.approve import approve_node, route_after_approve
from envqa.graphs.decide import decide_node, route_after_decide
from envqa.graphs.generate import generate_node, route_after_generate
from envqa.graphs.hunt import hunt_node
from envqa.graphs.load import load_node
from envqa.graphs.loop_report import report_node
from envqa.graphs.loop_state import RunState
from envqa.graphs.revise import gate_node, revise_node
from envqa.graphs.sweep import sweep_node
from envqa.graphs.validate import validate_node

__all__ = ["RunDeps", "RunState", "build_run_graph"]


def build_run_graph(deps: RunDeps, checkpointer=None):
    def gate(state: RunState) -> dict:
        out = gate_node(deps, state)
        notify(
            deps.config,
            "gate_result",
            {
                "run_id": state["run_id"],
                "env_name": state.get("env_name"),
                "version": state["version"],
                "proposal_id": state["proposal_id"],
                "passed": out.get("gate_passed"),
                "feedback": out.get("gate_feedback"),
            },
            store=deps.store,
            key=state["proposal_id"],
        )
        return out

    def after_revise(state: RunState) -> str:
        return "gate" if state.get("proposal_id") else "report"

    def after_gate(state: RunState) -> str:
        if state.get("gate_passed"):
            return "approve"
        return "revise" if state.get("repairs", 0) < deps.config.reviser.max_repairs else "report"

    g = StateGraph(RunState)
    nodes = {
        "generate": lambda state: generate_node(deps, state),  # issue 13: only for a spec.md directory
        "load": lambda state: load_node(deps, state),
        "validate": lambda state: validate_node(deps, state),
        "sweep": lambda state: sweep_node(deps, state),
        "analyze": lambda state: analyze_node(deps, state),
        "hunt": lambda state: hunt_node(deps, state),
        "decide": lambda state: decide_node(deps, state),
        "revise": lambda state: revise_node(deps, state),
        "gate": gate,
        "approve": lambda state: approve_node(deps, state),
        "adopt": lambda state: adopt_node(deps, state),
        "report": lambda state: report_node(deps, state),
    }
    for name, fn in nodes.items():
        # langgraph's node protocol names its parameter `state`; a Callable type cannot say so
        g.add_node(name, _entering(deps, name, fn))  # type: ignore[call-overload]
    g.add_conditional_edges(
        START, lambda state: "generate" if is_spec_dir(state["env_dir"]) else "load", ["generate", "load"]
    )
    g.add_conditional_edges("generate", route_after_generate, ["load", END])
    g.add_edge("load", "validate")
    g.add_edge("validate", "sweep")
    g.add_edge("sweep", "analyze")
    g.add_edge("analyze", "hunt")
    g.add_edge("hunt", "decide")
    g.add_conditional_edges("decide", route_after_decide, ["revise", "report"])
    g.add_conditional_edges("revise", after_revise, ["gate", "report"])
    g.add_conditional_edges("gate", after_gate, ["approve", "revise", "report"])
    g.add_conditional_edges("approve", route_after_approve, ["adopt", "gate", "report"])
    g.add_edge("adopt", "validate")
    g.add_edge("report", END)
    return g.compile(checkpointer=checkpointer)


def _entering(deps: RunDeps, name: str, fn: Callable[[RunState], dict]) -> Callable[[RunState], dict]:
    """Record the node a run enters (`qa status` says where a long run is), then run it."""

    def node(state: RunState) -> dict:
        deps.store.set_loop(state["run_id"], node=name)
        return fn(state)

    return node
