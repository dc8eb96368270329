"""Token and USD accounting: a price table from config, a ledger per trial, caps per run.

Prices are USD per million tokens, keyed by model spec (`[prices."anthropic/claude-sonnet-4-5"]`).
An unknown model costs 0 and is flagged `priced = False` so reports never pretend to know its cost.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from envqa.core.config import BudgetSettings, Price, QAConfig, default_prices
from envqa.core.model_client import Usage


def price_for(spec: str, config: QAConfig) -> Price | None:
    return config.prices.get(spec) or default_prices().get(spec)


def cost_usd(usage: Usage, price: Price | None) -> float:
    if price is None:
        return 0.0
    cached_rate = price.cached_input_per_mtok if price.cached_input_per_mtok is not None else price.input_per_mtok
    uncached = max(usage.input_tokens - usage.cached_input_tokens, 0)
    return (
        uncached * price.input_per_mtok
        + usage.cached_input_tokens * cached_rate
        + usage.output_tokens * price.output_per_mtok
    ) / 1_000_000


class Spend(BaseModel):
    """Tokens and dollars spent, by one call, one trial, or one run (they add up)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def add_call(self, usage: Usage, cost: float, priced: bool) -> None:
        self.calls += 1
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_input_tokens += usage.cached_input_tokens
        self.cost_usd += cost
        self.priced = self.priced and priced

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            priced=self.priced and other.priced,
        )


class BudgetCheck(BaseModel):
    exhausted: bool = False
    reasons: list[str] = Field(default_factory=list)


def check_budget(budget: BudgetSettings, spend: Spend, trials_started: int) -> BudgetCheck:
    """Which caps the run has reached. Checked before scheduling new trials, never mid-trial."""
    reasons = []
    if budget.max_usd is not None and spend.cost_usd >= budget.max_usd:
        reasons.append(f"spent ${spend.cost_usd:.4f} of max_usd=${budget.max_usd:g}")
    if budget.max_tokens is not None and spend.tokens >= budget.max_tokens:
        reasons.append(f"used {spend.tokens} tokens of max_tokens={budget.max_tokens}")
    if budget.max_trials is not None and trials_started >= budget.max_trials:
        reasons.append(f"started {trials_started} solver trials of max_trials={budget.max_trials}")
    return BudgetCheck(exhausted=bool(reasons), reasons=reasons)
