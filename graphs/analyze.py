"""The analyze node: a stored TrialLabel for every trial of the current version, and the roll-up.

Deterministic labels come first (probes/analyst/rules.py) and are final. With `[analyst] model` set, the
model trials the rules leave open (a solver's ordinary pass or fail) are labelled by the analyst model,
each call a job on that model's own queue (graphs/analyst_dispatch.py, scheduler/calls.py). Without
one they are stored as `unlabeled`, with the reason in `explanation`. The roll-up (probes/analyst/rollup.py) goes into
state["labels"] for decide and the reviser.

`label_trials` is also called at the end of the hunt node (its trials run after this node) and by the
report helper for any trial that somehow has no label yet, so every trial object in the report has one.
"""

from __future__ import annotations

import structlog

from envqa.core.environment import Environment, load_environment
from envqa.core.models import Finding, TrialLabel, TrialResult
from envqa.core.run_deps import RunDeps
from envqa.graphs.analyst_dispatch import run_analyst_jobs
from envqa.graphs.loop_state import current_env, state_trials
from envqa.probes.analyst.rollup import rollup
from envqa.probes.analyst.rules import context_for, deterministic_label, unlabeled
from envqa.probes.cross_trial.qa import version_findings

log = structlog.get_logger(__name__)
NO_MODEL = (
    "no analyst model configured ([analyst] model or --analyst-model): the rules prove nothing about "
    "this trial, and only a model reading its trajectory could label it"
)


def env_of(deps: RunDeps, state) -> Environment:
    """The current version's snapshot when the loop has versions, else the loaded directory."""
    if state.get("version"):
        return current_env(deps, state)
    return load_environment(state["env_dir"])


def _results(deps: RunDeps, state) -> list[TrialResult]:
    return state_trials(deps, state)  # the store's results, by the ids the state carries


def _findings(state) -> list[Finding]:
    return [Finding.model_validate(f) for f in state.get("findings", []) or []]


def label_trials(
    deps,
    run_id: str,
    env: Environment,
    trials: list[TrialResult],
    findings: list[Finding],
    siblings: list[TrialResult] | None = None,
) -> dict[str, TrialLabel]:
    """Label `trials` (idempotent): deterministic first, then the analyst model, else `unlabeled`."""
    ctx = context_for(env, siblings if siblings is not None else trials, findings)
    out: dict[str, TrialLabel] = {}
    open_trials: list[TrialResult] = []
    for t in trials:
        proven = deterministic_label(t, ctx)
        if proven is not None:
            out[t.trial_id] = deps.store.save_label(run_id, proven, t.env_version, t.model)
            continue
        stored = deps.store.label_for_trial(t.trial_id)
        if stored is not None and stored.source not in ("none",):
            out[t.trial_id] = stored
        else:
            open_trials.append(t)
    model = deps.config.analyst.model
    if open_trials and model:
        out.update(run_analyst_jobs(deps, run_id, env, open_trials, ctx))
        open_trials = [t for t in open_trials if t.trial_id not in out]
    for t in open_trials:
        out[t.trial_id] = deps.store.save_label(run_id, unlabeled(t, NO_MODEL), t.env_version, t.model)
    return out


def version_rollup(deps: RunDeps, run_id: str, trials: list[TrialResult]) -> dict:
    labels = deps.store.labels_for_run(run_id)
    pairs = [(t, labels[t.trial_id]) for t in trials if t.trial_id in labels]
    return rollup(pairs, deps.config.analyst.min_agreeing)


def analyze_node(deps: RunDeps, state) -> dict:
    """Label the current version's trials; returns {"labels": roll-up}."""
    trials = _results(deps, state)
    if not trials:
        return {"labels": rollup([], deps.config.analyst.min_agreeing)}
    env = env_of(deps, state)
    # Issue 33: the cross-trial rules (qa's own solver trials and imported ones alike) before the labels, so a
    # pass they prove a shortcut is labelled as one; the analyst model gets what they leave open.
    known = {f.rule for f in _findings(state)}
    cross = [f for f in version_findings(env, trials) if f.rule not in known]
    label_trials(deps, state["run_id"], env, trials, _findings(state) + cross)
    body = version_rollup(deps, state["run_id"], trials)
    log.info(
        "analyze.done",
        trials=len(trials),
        consistent=body["problem_labels"],
        noise=len(body["noise"]),
        cross_trial=len(cross),
    )
    return {"labels": body, **({"findings": [f.public() for f in cross]} if cross else {})}


def report_label(store, trial: TrialResult | dict) -> dict:
    """The `label` object of one report trial (the report body calls this for every trial)."""
    trial_id = trial["trial_id"] if isinstance(trial, dict) else trial.trial_id
    stored = store.label_for_trial(trial_id)
    if stored is None:
        stored = TrialLabel(
            trial_id=trial_id,
            label="unlabeled",
            subtype="not-analyzed",
            confidence=0.0,
            explanation="the run ended before this trial was analyzed",
            source="none",
        )
    return stored.public()
