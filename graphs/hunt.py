"""The hunt node: the shortcut hunter's deterministic probes, run in order, findings into the graph state.

No model is needed: static checks, scripted exploit agents under strace, the oracle's end state
(flakiness, leaked outputs, mutation testing) and egress reruns (envqa.probes). Every trial a probe
runs is recorded like any other, so the report lists it and a resumed run does not lose it. Each probe is
a job through the executor (envqa.probes.dispatch): on Redis it runs on a worker from the `sandbox`
queue, with that queue's limits, retries and liveness, exactly like the sweep's trials.
"""

from __future__ import annotations

import structlog

from envqa.core.layout import RunLayout
from envqa.core.models import Outcome
from envqa.core.registry import ENVIRONMENT_ERRORS
from envqa.core.run_deps import RunDeps
from envqa.graphs.hunt_llm import hunt_llm_and_label
from envqa.graphs.loop_state import current_env, state_trials, trial_summaries
from envqa.probes.base import ProbeContext
from envqa.probes.dispatch import dispatch_probes
from envqa.probes.static.findings import static_findings

log = structlog.get_logger(__name__)


def hunt_node(deps: RunDeps, state) -> dict:
    if state.get("incomplete"):  # the run could not finish validation; probing a broken sandbox proves nothing
        return _files_only(deps, state, "validation could not finish (see incomplete): nothing was probed")
    if any(f.get("rule") == "image-build-failed" for f in state.get("findings", [])):
        # no image, nothing to probe (and rebuilding it would only fail again)
        return _files_only(deps, state, "the image does not build: nothing to probe")
    env = current_env(deps, state)
    validation = state_trials(deps, state)  # the store's results, by the ids the state carries

    # Each probe is one job through the executor (the sandbox queue on Redis; this process in local mode).
    findings, lost, coverage, probe_trials = dispatch_probes(
        deps.executor, deps.store, env, deps.config, state["run_id"], deps.config.probes.enabled, validation
    )

    # The version's probe context for the LLM hunter's part: it carries the probes' trials and coverage (its
    # replays are jobs through the executor too, graphs/hunt_llm.py), nothing runs in it here.
    ctx = ProbeContext(
        env=env,
        config=deps.config,
        backend=deps.backend,
        run_id=state["run_id"],
        layout=RunLayout(deps.config.runs_dir, state["run_id"]),
        validation=validation,
        new_trials=probe_trials,
        coverage=coverage,
    )
    # The LLM hunter, then a label for every trial of the version (issue 11; graphs/hunt_llm.py).
    llm_findings, hunter_trials, labels = hunt_llm_and_label(deps, state, ctx, env, findings)
    findings += llm_findings
    # A probe trial lost to the machinery (not to the environment) leaves its question unanswered.
    lost += [
        f"{t.trial_id}: {t.error_class}: {t.error_message}"
        for t in ctx.new_trials
        if t.outcome == Outcome.INFRA and t.error_class not in ENVIRONMENT_ERRORS
    ]
    update = {
        "findings": [f.model_dump(mode="json") for f in findings],
        "trials": trial_summaries([*ctx.new_trials, *hunter_trials]),
        "coverage": ctx.coverage,
        "labels": labels,
    }
    if lost:
        update["incomplete"] = lost
    return update


def _files_only(deps: RunDeps, state, reason: str) -> dict:
    """No sandbox to probe, but the static rules read only the task's files: they run and are reported (issue 24),
    so an inconclusive run or an image that does not build still says what the files get wrong."""
    coverage = _all_skipped(deps, reason)
    if "static" not in deps.config.probes.enabled:
        return {"coverage": coverage}
    s = deps.config.probes
    findings = static_findings(current_env(deps, state), s.lint_root_agent, s.lint_unpinned_base)
    coverage = [
        c
        if c["probe"] != "static"
        else {
            "probe": "static",
            "status": "ran",
            "reason": f"file rules only; the checks inside the image were not run: {reason}",
        }
        for c in coverage
    ]
    return {"coverage": coverage, "findings": [f.model_dump(mode="json") for f in findings]}


def _all_skipped(deps: RunDeps, reason: str) -> list[dict]:
    return [{"probe": name, "status": "skipped", "reason": reason} for name in deps.config.probes.enabled]
