"""One budget for the whole run: what every model role has spent so far, over every version.

Solver and LLM-hunter trials (their ATIF final metrics), the trace analyst's and the reviser's calls, and
the generator's attempts. `decide`'s caps and the reviser's check before each call read this same figure,
so no role can slip past a cap that another role's spending has already reached, and an adopted version's
sweep does not start the count again. The report shows the same figures per role and model.
"""

from __future__ import annotations

from envqa.core.pricing import BudgetCheck, Spend, check_budget
from envqa.core.run_deps import RunDeps
from envqa.graphs.analyst_dispatch import analyst_spend
from envqa.graphs.sweep import _spend as trial_spend

MODEL_AGENTS = ("solver", "hunter")
ROLES = ("solver", "hunter", "analyst", "reviser", "generator")


def role_spend(deps: RunDeps, state, roles: tuple[str, ...] = ROLES, trials=None) -> dict[str, dict[str, Spend]]:
    """{role: {model: Spend}} for every model call of the run so far, for `roles` (absent: no spend).
    `trials`: the run's trials when the caller has them already."""
    out: dict[str, dict[str, Spend]] = {}

    def add(role: str, model: str, spend: Spend) -> None:
        if spend.calls or spend.tokens or spend.cost_usd:
            out.setdefault(role, {})[model] = out.get(role, {}).get(model, Spend()) + spend

    trials = deps.store.trials_for_run(state["run_id"]) if trials is None else trials
    for t in trials:
        if t.agent in MODEL_AGENTS and t.agent in roles and t.model and t.artifacts_dir:
            add(t.agent, t.model, trial_spend([t]))
    if "analyst" in roles and deps.config.analyst.model:
        add("analyst", deps.config.analyst.model, analyst_spend(deps.config, deps.store, trials))
    if "reviser" in roles:
        for p in deps.store.proposals_for_run(state["run_id"]):
            if p.spend:
                add("reviser", str(p.author or "").removeprefix("model:"), Spend.model_validate(p.spend))
    if "generator" in roles:
        generation = state.get("generation") or {}
        for attempt in generation.get("attempts") or []:
            if attempt.get("spend"):
                add("generator", generation.get("model") or "", Spend.model_validate(attempt["spend"]))
    return out


def run_budget(deps: RunDeps, state) -> BudgetCheck:
    """The `[budget]` caps against the run's whole spend and the solver trials it started."""
    trials = deps.store.trials_for_run(state["run_id"])
    total = Spend()
    for by_model in role_spend(deps, state, trials=trials).values():
        for spend in by_model.values():
            total = total + spend
    return check_budget(deps.config.budget, total, sum(t.agent == "solver" for t in trials))


def spend_section(deps: RunDeps, state) -> dict[str, dict[str, dict]]:
    """The report's `spend`: the roles whose spend no other key shows (solver spend is in each version's
    sweep, the reviser's in each proposal)."""
    return {
        role: {model: s.model_dump(mode="json") for model, s in by_model.items()}
        for role, by_model in role_spend(deps, state, roles=("hunter", "analyst", "generator")).items()
    }
