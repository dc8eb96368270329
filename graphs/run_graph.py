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
from dataclasses import dataclass, field

from langgraph.graph import END, START, StateGraph

from envqa.agents.generator import is_spec_dir
from envqa.core.config import QAConfig
from envqa.core.executor import Executor
from envqa.core.models import Outcome, TrialSpec
from envqa.core.notify import notify
from envqa.core.registry import VERIFIER_ERRORS
from envqa.core.sandbox import ImageBuildError, SandboxBackend
from envqa.core.store import Store, Versions
from envqa.graphs.adopt import adopt_node
from envqa.graphs.analyze import analyze_node
from envqa.graphs.approve import approve_node, route_after_approve
from envqa.graphs.decide import decide_node, route_after_decide
from envqa.graphs.generate import generate_node, route_after_generate
from envqa.graphs.hunt import hunt_node
from envqa.graphs.loop_report import report_node
from envqa.graphs.loop_state import RunState, current_env, trial_summaries, versions_of
from envqa.graphs.revise import gate_node, revise_node
from envqa.graphs.sweep import check_models, sweep_node
from envqa.probes.inconclusive import build_failure_update, validation_update
from envqa.probes.lint import lint_structure
from envqa.probes.validation import build_failed_finding, validation_findings

__all__ = ["RunDeps", "RunState", "build_run_graph"]


@dataclass
class RunDeps:
    config: QAConfig
    store: Store
    versions: Versions
    backend: SandboxBackend
    executor: Executor
    on_event: Callable[..., None] = field(default=lambda *a, **k: None)


def build_run_graph(deps: RunDeps, checkpointer=None):
    def load(state: RunState) -> dict:
        check_models(deps.config)  # a malformed model spec or a missing API key: exit 2 before any build
        # The only read of the user's directory: from here on every node loads this immutable snapshot.
        generated = state.get("generation") or {}  # issue 13: a task generated from spec.md is version 1
        author, reason = (
            (f"model:{generated['model']}", "generated from " + str(state.get("spec_dir")))
            if generated.get("passed")
            else ("user", "loaded")
        )
        info = versions_of(deps).snapshot(state["env_dir"], author=author, reason=reason, run_id=state["run_id"])
        env = current_env(deps, {"version": info.version, "env_name": info.name})
        deps.store.set_run_env(state["run_id"], env.name, env.version)
        deps.store.set_loop(state["run_id"], approval_mode=state.get("approval_mode"), iteration=0, version=env.version)
        lint = lint_structure(env)
        deps.on_event("loaded", env=env, findings=lint)
        return {
            "env_name": env.name,
            "env_version": env.version,
            "version": env.version,
            "versions": [env.version],
            "iteration": 0,
            "history": [],
            "findings": [f.model_dump(mode="json") for f in lint],
        }

    def validate(state: RunState) -> dict:
        env = current_env(deps, state)
        deps.on_event("build_start", env=env)
        try:
            tag, built = deps.backend.ensure_image(env, on_log=lambda line: deps.on_event("build_log", line=line))
        except ImageBuildError as e:
            f = build_failed_finding(str(e), [e.log_tail], env.dockerfile.relative_to(env.root).as_posix())
            deps.on_event("build_done", tag=None, built=False, error=str(e))
            return build_failure_update(env, deps.config, e, f)  # build-needs-network, image-map-build-failed
        if built:
            deps.store.record_build(tag, env.version)
        deps.on_event("build_done", tag=tag, built=built)
        vs = deps.config.validate_
        specs = [
            TrialSpec(run_id=state["run_id"], env_version=env.version, agent="oracle", index=i)
            for i in range(deps.config.oracle_runs_for("validate"))
        ]
        specs += [
            TrialSpec(run_id=state["run_id"], env_version=env.version, agent="nop", index=i) for i in range(vs.nop_runs)
        ]
        results = deps.executor.run(env, specs)
        infra = [r for r in results if r.outcome == Outcome.INFRA and r.error_class not in VERIFIER_ERRORS]
        judged = validation_update(env, deps.config, results, validation_findings(results))  # *-needs-network
        return {
            "trials": trial_summaries(results),
            **judged,
            "incomplete": [f"{r.trial_id}: {r.error_class}: {r.error_message}" for r in infra]
            + judged.get("incomplete", []),
        }

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
        "load": load,
        "validate": validate,
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
