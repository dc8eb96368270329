"""Hand the trials the rules left open to the analyst model, as calls on its queue, within the budget.

Each trial's analysis is one call through the `Executor` (the same path as the reviser's and the
generator's calls; its body is envqa.app.jobs.label_job): the model's concurrency limit holds across
workers, a 429 parks that queue only, transient errors retry with backoff, and a call that gives up leaves
the trial `unlabeled` with the error class. With no Redis the calls run in-process, one after another.

The run's budget (`[budget]`) covers analyst calls too: solver trials' spend plus what earlier analyst
calls cost (their results, in the store's `calls` rows, so it holds whichever host ran them); once it is
reached no new analyst call starts and the remaining trials stay `unlabeled` with that reason.
"""

from __future__ import annotations

from pathlib import Path

import structlog

from envqa.core.environment import Environment
from envqa.core.executor import LABEL_CALL, Call, absolute_config, results_of
from envqa.core.models import Finding, TrialLabel, TrialResult
from envqa.core.pricing import Spend, check_budget
from envqa.core.statuses import CallStatus
from envqa.graphs.sweep import _spend
from envqa.probes.analyst.model import AnalystJob, analyst_call_id
from envqa.probes.analyst.rules import LabelContext, unlabeled

log = structlog.get_logger(__name__)


def probe_evidence(trial: TrialResult, findings: list[Finding], limit: int = 10) -> list[str]:
    """What the probes said: findings about this trial first, then the environment's other findings."""
    own = [f for f in findings if trial.trial_id in f.trial_ids]
    other = [f for f in findings if f not in own]
    lines = [f"{f.rule} ({f.label}, about this trial): {f.message}" for f in own]
    lines += [f"{f.rule} ({f.label}): {f.message}" for f in other]
    return lines[:limit]


def analyst_spend(config, store, trials: list[TrialResult]) -> Spend:
    """What the analyst model's calls on these trials cost so far."""
    if not config.analyst.model:
        return Spend()
    ids = [analyst_call_id(t.trial_id, config.analyst.model) for t in trials]
    total = Spend()
    for result in results_of(store, ids):
        if result.get("spend"):
            total = total + Spend.model_validate(result["spend"])
    return total


def budget_reached(config, store, trials: list[TrialResult]) -> list[str]:
    """The `[budget]` caps these trials' model spend (solver, hunter, analyst calls) has reached, if any."""
    spent = [t for t in trials if t.artifacts_dir]
    check = check_budget(config.budget, _spend(spent) + analyst_spend(config, store, trials), len(trials))
    return check.reasons if check.exhausted else []


def run_analyst_jobs(
    deps, run_id: str, env: Environment, trials: list[TrialResult], ctx: LabelContext
) -> dict[str, TrialLabel]:
    config, store = deps.config, deps.store
    model = config.analyst.model
    reached = budget_reached(config, store, ctx.trials)
    out: dict[str, TrialLabel] = {}
    if reached:
        reason = "budget reached before the analyst ran: " + "; ".join(reached)
        for t in trials:
            out[t.trial_id] = store.save_label(run_id, unlabeled(t, reason, "budget"), t.env_version, t.model)
        return out
    cfg = absolute_config(config)
    calls = [
        Call(
            call_id=analyst_call_id(t.trial_id, model),
            model=model,
            func=LABEL_CALL,
            args=AnalystJob(
                run_id=run_id,
                trial_id=t.trial_id,
                env_dir=str(Path(env.root).resolve()),
                model=model,
                probe_evidence=probe_evidence(t, ctx.findings),
                config=cfg,
            ).model_dump(mode="json"),
        )
        for t in trials
    ]
    rows = deps.executor.run_calls(calls, deadline_sec=config.analyst.wait_sec)
    late = 0
    for t, call in zip(trials, calls):
        row, label = rows[call.call_id], store.label_for_trial(t.trial_id)
        if label is None and row["status"] == CallStatus.FAILED:  # the analyst could not answer: never a guessed label
            label = store.save_label(
                run_id,
                unlabeled(
                    t,
                    f"the analyst model {model} failed ({row['error_class']}): {(row['error_message'] or '')[:300]}",
                    "analyst-failed",
                ),
                t.env_version,
                t.model,
            )
        elif label is None:
            late += 1
            label = store.save_label(
                run_id,
                unlabeled(
                    t,
                    f"the analyst job on {model}'s queue did not finish within {config.analyst.wait_sec:g}s "
                    f"([analyst] wait_sec)",
                    "analyst-failed",
                ),
                t.env_version,
                t.model,
            )
        out[t.trial_id] = label
    log.info("analyst.done", model=model, trials=len(trials), late=late)
    return out
