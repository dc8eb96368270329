"""The sweep node: solver trials per model, scheduled through the executor onto per-model queues.

The first round runs one trial per model (a bad key or endpoint surfaces after a single call); each
later round sends every still-open model's next batch to `deps.executor.run` together, so the scheduler
can run models in parallel on their own queues. Between rounds the node checks, per model, the
adaptive stopping rule (core/stats.py) and, for the run, the budget caps; a reached cap stops new
trials cleanly and is reported under `sweep.budget_stop`. Infra trials (rate limits, provider or
sandbox failures) are kept and counted separately: never a fail, never in a pass rate. A rejected API
key stops the run with ProviderAuthError (exit 2) instead of burning the remaining trials.

With no models configured the node does nothing, which is how `qa run` works with no API key.
"""

from __future__ import annotations

import structlog

from envqa.agents.trajectory import read_final_metrics
from envqa.core.config import QAConfig
from envqa.core.errors import ProviderAuthError
from envqa.core.model_client import client_for
from envqa.core.models import Outcome, TrialResult, TrialSpec
from envqa.core.pricing import Spend, check_budget
from envqa.core.run_deps import RunDeps
from envqa.core.stats import StopRule, pass_at_k, summarize, wilson
from envqa.graphs.imported import by_identity, import_trials
from envqa.graphs.loop_state import current_env, trial_summaries

log = structlog.get_logger(__name__)


def sweep_node(deps: RunDeps, state) -> dict:
    config: QAConfig = deps.config
    sw = config.sweep
    models = list(dict.fromkeys(sw.models))
    if not models and not sw.trials_from:  # issue 33: imported trials alone make a sweep (nothing is re-run)
        return {}
    env = current_env(deps, state)
    check_models(config)
    target = sw.n_max if sw.adaptive else sw.trials
    batch = sw.batch if (sw.adaptive or _has_budget(config)) else target
    rule = StopRule(
        band=(sw.band_low, sw.band_high),
        trial_cost=sw.stop_trial_cost,
        prior=sw.stop_prior,
        n_min=sw.n_min,
        n_max=sw.n_max,
        batch=batch,
    )
    results: dict[str, list[TrialResult]] = {m: [] for m in models}
    stopped: dict[str, str] = {}
    budget_stop: list[str] = []
    while True:
        spend = _spend([r for rs in results.values() for r in rs])
        started = sum(len(rs) for rs in results.values())
        check = check_budget(config.budget, spend, started)
        if check.exhausted:
            budget_stop = check.reasons
            for m in models:  # a model that was done anyway keeps its own reason
                stopped.setdefault(m, _stop_reason(results[m], rule, sw.adaptive, target) or "budget")
            break
        allowed = None if config.budget.max_trials is None else config.budget.max_trials - started
        specs: list[TrialSpec] = []
        for model in models:
            if model in stopped:
                continue
            reason = _stop_reason(results[model], rule, sw.adaptive, target)
            if reason:
                stopped[model] = reason
                continue
            # One trial per model first: a rejected key or a broken endpoint shows after one call, not n.
            count = min(batch if results[model] else 1, target - len(results[model]))
            if allowed is not None:
                count = min(count, allowed - len(specs))
            specs += [
                TrialSpec(
                    run_id=state["run_id"],
                    env_version=env.version,
                    agent="solver",
                    model=model,
                    index=len(results[model]) + i,
                    purpose="sweep",
                )
                for i in range(max(count, 0))
            ]
        if not specs:
            break
        for result in deps.executor.run(env, specs):
            assert result.model is not None  # a sweep trial's spec names its model
            results[result.model].append(result)
        _raise_on_auth(results)
    imported = import_trials(deps, state["run_id"], env, state.get("env_dir"))  # issue 33: --trials-from
    for key, rs in by_identity(imported.counted).items():
        results.setdefault(key, []).extend(rs)
        stopped.setdefault(key, "imported")
    body = sweep_report(results, stopped, budget_stop, rule, config)
    if sw.trials_from:
        body["imported"] = imported.public()
    log.info("sweep.done", models=len(models), trials=body["overall"]["trials"], budget_stop=budget_stop)
    unmeasured = [
        f"sweep {m}: no trial finished without an infrastructure failure"
        for m, s in body["models"].items()
        if s["n"] == 0
    ]
    return {
        "trials": trial_summaries([r for rs in results.values() for r in rs]),
        "sweep": body,
        **({"incomplete": unmeasured} if unmeasured else {}),
    }


def check_models(config: QAConfig) -> None:
    """Fail fast (exit 2) on a malformed spec, an unknown provider or a missing key, before any work."""
    for model in dict.fromkeys([*config.sweep.models, config.analyst.model, config.hunter.model, config.reviser.model]):
        if model:  # the analyst's and the hunter's too (issue 11), and the reviser's (issue 9)
            client_for(model, config)


def _has_budget(config: QAConfig) -> bool:
    b = config.budget
    return b.max_usd is not None or b.max_tokens is not None or b.max_trials is not None


def _stop_reason(rs: list[TrialResult], rule: StopRule, adaptive: bool, target: int) -> str | None:
    measured = [r for r in rs if r.outcome != Outcome.INFRA]
    if len(rs) >= target:
        return "n_max" if adaptive else "done"
    if rs and len(rs) >= 3 and all(r.outcome == Outcome.INFRA for r in rs[-3:]):
        return f"infra:{rs[-1].error_class}"  # the scheduler already retried; stop spending on a broken provider
    if adaptive and rule.should_stop(sum(r.outcome == Outcome.PASS for r in measured), len(measured)):
        return "decided"
    return None


def _raise_on_auth(results: dict[str, list[TrialResult]]) -> None:
    for rs in results.values():
        for r in rs:
            if r.error_class == "auth":
                raise ProviderAuthError(
                    r.error_message or f"{r.model}: the provider rejected the API key", "auth", r.model
                )


def _spend(rs: list[TrialResult]) -> Spend:
    total = Spend()
    for r in rs:
        fm = read_final_metrics(r.artifacts_dir)
        if fm is not None:
            total = total + Spend(
                calls=int(fm.extra.get("calls", 0)),
                input_tokens=fm.total_prompt_tokens,
                output_tokens=fm.total_completion_tokens,
                cached_input_tokens=fm.total_cached_tokens,
                cost_usd=fm.total_cost_usd,
                priced=bool(fm.extra.get("priced", True)),
            )
    return total


def sweep_report(
    results: dict[str, list[TrialResult]],
    stopped: dict[str, str],
    budget_stop: list[str],
    rule: StopRule,
    config: QAConfig,
) -> dict:
    """Per model and overall: pass@1 with a Wilson CI, unbiased pass@k, infra counts, band call, spend."""
    sw = config.sweep
    band = (sw.band_low, sw.band_high)
    per_model, overall_spend = {}, Spend()
    for model, rs in results.items():
        measured = [r for r in rs if r.outcome != Outcome.INFRA]
        passes = sum(r.outcome == Outcome.PASS for r in measured)
        stats = summarize(passes, len(measured), band, sw.report_confidence, sw.pass_k)
        spend = _spend(rs)
        overall_spend = overall_spend + spend
        per_model[model] = {
            **stats.model_dump(mode="json"),
            "trials": len(rs),
            "infra": len(rs) - len(measured),
            "infra_classes": sorted({r.error_class for r in rs if r.outcome == Outcome.INFRA and r.error_class}),
            "stop_reason": stopped.get(model, "done"),
            "band_decision": rule.decision(passes, len(measured)).value if sw.adaptive else stats.band.value,
            "spend": {**spend.model_dump(), "tokens": spend.tokens},
        }
    n = sum(m["n"] for m in per_model.values())
    passes = sum(m["passes"] for m in per_model.values())
    lo, hi = wilson(passes, n, sw.report_confidence)
    overall_k = {}
    for k in sw.pass_k:  # mean over models of each model's unbiased estimate, where estimable
        estimates = [pass_at_k(m["n"], m["passes"], k) for m in per_model.values()]
        vals = [v for v in estimates if v is not None]
        overall_k[str(k)] = sum(vals) / len(vals) if vals else None
    return {
        "adaptive": sw.adaptive,
        "band": list(band),
        "models": per_model,
        "overall": {
            "trials": sum(m["trials"] for m in per_model.values()),
            "n": n,
            "passes": passes,
            "infra": sum(m["infra"] for m in per_model.values()),
            "pass_at_1": passes / n if n else None,
            "ci_low": round(lo, 4),
            "ci_high": round(hi, 4),
            "confidence": sw.report_confidence,
            "pass_at_k": overall_k,
            "spend": {**overall_spend.model_dump(), "tokens": overall_spend.tokens},
        },
        "budget_stop": ("budget reached, no new trials started: " + "; ".join(budget_stop)) if budget_stop else None,
    }
