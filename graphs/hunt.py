"""The hunt node: the shortcut hunter's deterministic probes, run in order, findings into the graph state.

No model is needed: static checks, scripted exploit agents under strace, the oracle's end state
(flakiness, leaked outputs, mutation testing) and egress reruns (envqa.probes). Every trial a probe
runs is recorded like any other, so the report lists it and a resumed run does not lose it.
"""

from __future__ import annotations

import structlog

from envqa.agents.trial import ENVIRONMENT_ERRORS
from envqa.environment import load_environment
from envqa.models import Outcome, TrialResult
from envqa.probes.base import ProbeContext, run_probes
from envqa.store.artifacts import RunLayout

log = structlog.get_logger(__name__)


def hunt_node(deps, state) -> dict:
    if state.get("incomplete"):
        return {}  # the run could not finish validation; probing a broken sandbox proves nothing
    if any(f.get("rule") == "image-build-failed" for f in state.get("findings", [])):
        return {}  # no image, nothing to probe (and rebuilding it would only fail again)
    env = load_environment(state["env_dir"])
    validation = [TrialResult.model_validate(t) for t in state.get("trials", [])]

    def record(result: TrialResult) -> None:
        deps.store.record_trial(result)
        deps.on_event("trial_done", spec=_SpecView(result), result=result)

    ctx = ProbeContext(env=env, config=deps.config, backend=deps.backend, run_id=state["run_id"],
                       layout=RunLayout(deps.config.runs_dir, state["run_id"]), validation=validation, record=record,
                       announce=lambda spec: deps.on_event("trial_start", spec=spec))
    findings, lost = run_probes(ctx, deps.config.probes.enabled)
    # A probe trial lost to the machinery (not to the environment) leaves its question unanswered.
    lost += [f"{t.trial_id}: {t.error_class}: {t.error_message}" for t in ctx.new_trials
             if t.outcome == Outcome.INFRA and t.error_class not in ENVIRONMENT_ERRORS]
    update = {"findings": [f.model_dump(mode="json") for f in findings],
              "trials": [t.model_dump(mode="json") for t in ctx.new_trials]}
    if lost:
        update["incomplete"] = lost
    return update


class _SpecView:
    """What progress displays read from a spec (`agent`, `index`), for trials a probe started itself."""

    def __init__(self, result: TrialResult):
        self.agent, self.index, self.trial_id = result.agent, 0, result.trial_id
