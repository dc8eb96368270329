"""`qa run` as a LangGraph StateGraph: load -> validate -> sweep -> hunt -> report, checkpointed in SQLite.

The thread id is the run id, so a run killed halfway resumes from its last finished node
(`qa run --resume RUN_ID`), and trials already recorded in the store are not run again. State holds
only JSON-able data; the machinery (store, sandbox backend, executor) is passed in as `RunDeps`.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, TypedDict

from langgraph.graph import END, START, StateGraph

from envqa.config import QAConfig
from envqa.graphs.hunt import hunt_node
from envqa.graphs.sweep import check_models, sweep_node
from envqa.environment import load_environment
from envqa.models import Finding, Outcome, Severity, TrialResult, TrialSpec
from envqa.probes.lint import lint_structure
from envqa.probes.validation import build_failed_finding, validation_findings
from envqa.sandbox.base import ImageBuildError, SandboxBackend
from envqa.scheduler.local import Executor
from envqa.store.artifacts import RunLayout
from envqa.store.db import Store


class RunState(TypedDict, total=False):
    run_id: str
    env_dir: str
    env_name: str
    env_version: str
    trials: Annotated[list[dict], operator.add]
    findings: Annotated[list[dict], operator.add]
    incomplete: Annotated[list[str], operator.add]
    sweep: dict
    verdict: str


@dataclass
class RunDeps:
    config: QAConfig
    store: Store
    backend: SandboxBackend
    executor: Executor
    on_event: Callable[..., None] = field(default=lambda *a, **k: None)


def verdict_of(findings: list[Finding], incomplete: list[str]) -> str:
    if incomplete:
        return "incomplete"
    if any(f.severity != Severity.INFO for f in findings):
        return "findings"
    return "clean"


def build_run_graph(deps: RunDeps, checkpointer=None):
    def load(state: RunState) -> dict:
        check_models(deps.config)  # a malformed model spec or a missing API key: exit 2 before any build
        env = load_environment(state["env_dir"])
        deps.store.set_run_env(state["run_id"], env.name, env.version, str(env.root), env.format)
        lint = lint_structure(env)
        deps.on_event("loaded", env=env, findings=lint)
        return {"env_name": env.name, "env_version": env.version,
                "findings": [f.model_dump(mode="json") for f in lint]}

    def validate(state: RunState) -> dict:
        env = load_environment(state["env_dir"])
        if env.version != state["env_version"]:
            raise RuntimeError("the environment changed on disk during the run; start a new run")
        deps.on_event("build_start", env=env)
        try:
            tag, built = deps.backend.ensure_image(env, on_log=lambda line: deps.on_event("build_log", line=line))
        except ImageBuildError as e:
            f = build_failed_finding(str(e), [e.log_tail], env.dockerfile.relative_to(env.root).as_posix())
            deps.on_event("build_done", tag=None, built=False, error=str(e))
            return {"findings": [f.model_dump(mode="json")]}
        if built:
            deps.store.record_build(tag, env.version)
        deps.on_event("build_done", tag=tag, built=built)
        vs = deps.config.validate_
        specs = [TrialSpec(run_id=state["run_id"], env_version=env.version, agent="oracle", index=i)
                 for i in range(vs.oracle_runs)]
        specs += [TrialSpec(run_id=state["run_id"], env_version=env.version, agent="nop", index=i)
                  for i in range(vs.nop_runs)]
        results = deps.executor.run(env, specs)
        infra = [r for r in results if r.outcome == Outcome.INFRA
                 and r.error_class not in ("verifier_error", "verifier_timeout")]
        return {
            "trials": [r.model_dump(mode="json") for r in results],
            "findings": [f.model_dump(mode="json") for f in validation_findings(results)],
            "incomplete": [f"{r.trial_id}: {r.error_class}: {r.error_message}" for r in infra],
        }

    def report(state: RunState) -> dict:
        findings = [Finding.model_validate(f) for f in state.get("findings", [])]
        verdict = verdict_of(findings, state.get("incomplete", []))
        body = report_body(state, verdict)
        deps.store.finish_run(state["run_id"], verdict, body, findings)
        RunLayout(deps.config.runs_dir, state["run_id"]).write_report(body)
        return {"verdict": verdict}

    g = StateGraph(RunState)
    g.add_node("load", load)
    g.add_node("validate", validate)
    g.add_node("sweep", lambda state: sweep_node(deps, state))
    g.add_node("hunt", lambda state: hunt_node(deps, state))
    g.add_node("report", report)
    g.add_edge(START, "load")
    g.add_edge("load", "validate")
    g.add_edge("validate", "sweep")
    g.add_edge("sweep", "hunt")
    g.add_edge("hunt", "report")
    g.add_edge("report", END)
    return g.compile(checkpointer=checkpointer)


def report_body(state: RunState, verdict: str) -> dict[str, Any]:
    """The `--json` document: stable keys, extended by later stages, never broken."""
    trials = [TrialResult.model_validate(t) for t in state.get("trials", [])]
    return {
        "run_id": state["run_id"],
        "environment": {"dir": state["env_dir"], "name": state.get("env_name"), "version": state.get("env_version")},
        "verdict": verdict,
        "findings": state.get("findings", []),
        "trials": [
            {"trial_id": t.trial_id, "agent": t.agent, "purpose": t.purpose, "model": t.model, "outcome": t.outcome.value,
             "reward": t.reward, "error_class": t.error_class, "artifacts_dir": t.artifacts_dir,
             "seconds": round((t.finished_at - t.started_at).total_seconds(), 3)}
            for t in trials
        ],
        "incomplete": state.get("incomplete", []),
        "sweep": state.get("sweep"),  # per-model/overall pass@1 + CI, pass@k, spend, budget_stop (graphs/sweep.py)
    }
