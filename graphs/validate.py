"""The run graph's `validate` node: build the version's image, then the oracle and nop trials that say whether
the task is sound enough to go on (a failed build, an oracle that fails, a nop that passes: the validation
findings)."""

from __future__ import annotations

from envqa.core.events import RunEvent
from envqa.core.models import Outcome, TrialSpec
from envqa.core.registry import VERIFIER_ERRORS
from envqa.core.run_deps import RunDeps
from envqa.core.sandbox import ImageBuildError
from envqa.graphs.loop_state import RunState, current_env, trial_summaries
from envqa.probes.inconclusive import build_failure_update, validation_update
from envqa.probes.validation import build_failed_finding, validation_findings


def validate_node(deps: RunDeps, state: RunState) -> dict:
    """Build the current version's image and run its oracle and nop trials."""
    env = current_env(deps, state)
    deps.on_event(RunEvent.BUILD_START, env=env)
    try:
        tag, built = deps.backend.ensure_image(env, on_log=lambda line: deps.on_event(RunEvent.BUILD_LOG, line=line))
    except ImageBuildError as e:
        f = build_failed_finding(str(e), [e.log_tail], env.dockerfile.relative_to(env.root).as_posix())
        deps.on_event(RunEvent.BUILD_DONE, tag=None, built=False, error=str(e))
        return build_failure_update(env, deps.config, e, f)  # build-needs-network, image-map-build-failed
    if built:
        deps.store.record_build(tag, env.version)
    deps.on_event(RunEvent.BUILD_DONE, tag=tag, built=built)
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
