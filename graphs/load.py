"""The run graph's `load` node: the one read of the user's task directory. It snapshots the directory as an
immutable version (every later node loads that snapshot), records it as the run's environment, and lints its
structure."""

from __future__ import annotations

from envqa.core.events import RunEvent
from envqa.core.run_deps import RunDeps
from envqa.graphs.loop_state import RunState, current_env, versions_of
from envqa.graphs.sweep import check_models
from envqa.probes.static.lint import lint_structure


def load_node(deps: RunDeps, state: RunState) -> dict:
    """Snapshot `env_dir` as the run's first version; its structure findings start the run's findings."""
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
    deps.on_event(RunEvent.LOADED, env=env, findings=lint)
    return {
        "env_name": env.name,
        "env_version": env.version,
        "version": env.version,
        "versions": [env.version],
        "iteration": 0,
        "history": [],
        "findings": [f.model_dump(mode="json") for f in lint],
    }
