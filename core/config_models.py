"""The configuration of model work: the sweep, providers and prices, budgets, the solver, the analyst and the LLM
hunter (`[sweep]`, `[providers.*]`, `[prices.*]`, `[budget]`, `[solver]`, `[analyst]`, `[hunter]`).

Part of envqa.core.config (which re-exports every name); defaults come from envqa.core.defaults.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from envqa.core.config_runtime import Section
from envqa.core.defaults import (
    ANALYST_MAX_OUTPUT_TOKENS,
    ANALYST_MIN_AGREEING,
    ANALYST_TRAJECTORY_TOKENS,
    ANALYST_WAIT_SEC,
    HUNTER_TRIALS,
    PROVIDER_TIMEOUT_SEC,
    PROVIDER_TRANSIENT_RETRIES,
    SOLVER_COMMAND_TIMEOUT_SEC,
    SOLVER_MAX_OUTPUT_TOKENS,
    SOLVER_MAX_STEPS,
    SOLVER_MAX_TOKENS_PER_TRIAL,
    SOLVER_OBSERVATION_CHARS,
    STRUCTURED_RETRIES,
    SWEEP_BAND_HIGH,
    SWEEP_BAND_LOW,
    SWEEP_BATCH,
    SWEEP_N_MAX,
    SWEEP_N_MIN,
    SWEEP_REPORT_CONFIDENCE,
    SWEEP_STOP_PRIOR,
    SWEEP_STOP_TRIAL_COST,
    SWEEP_TRIALS,
)


class SweepSettings(Section):
    """Solver trials per model (issue 4). No models: no sweep, no API key needed.

    With `adaptive` on, `trials` is ignored: each model runs batches until the Bayesian stopping rule
    (core/stats.py StopRule) finds another batch dearer than the chance of a wrong band call, or n_max.
    """

    models: list[str] = Field(default_factory=list, description="solver models (provider/model); `-m` adds")
    trials: int = Field(default=SWEEP_TRIALS, ge=1, description="trials per model (fixed sweep)")
    adaptive: bool = Field(default=False, description="Bayesian sequential stopping instead of a fixed count")
    n_min: int = Field(default=SWEEP_N_MIN, ge=1, description="adaptive: trials per model before it may stop")
    n_max: int = Field(default=SWEEP_N_MAX, ge=1, description="adaptive: trials per model at most")
    batch: int = Field(default=SWEEP_BATCH, ge=1, description="trials per model scheduled between two checks")
    band_low: float = Field(default=SWEEP_BAND_LOW, ge=0, le=1, description="target band's lower pass@1")
    band_high: float = Field(default=SWEEP_BAND_HIGH, ge=0, le=1, description="target band's upper pass@1")
    stop_trial_cost: float = Field(
        default=SWEEP_STOP_TRIAL_COST,
        gt=0,
        lt=1,
        description="price of one trial, in units of a wrong band call: lower spends more trials for fewer wrong calls",
    )
    stop_prior: float = Field(
        default=SWEEP_STOP_PRIOR, gt=0, description="Beta(prior, prior) prior on a model's pass rate"
    )
    report_confidence: float = Field(
        default=SWEEP_REPORT_CONFIDENCE, gt=0, lt=1, description="Wilson level of reported CIs"
    )
    pass_k: list[int] = Field(default_factory=lambda: [1, 5], description="k values of the unbiased pass@k reported")
    trials_from: list[str] = Field(
        default_factory=list,
        description="Harbor job or `tb run` folders whose "
        "trials join the sweep as imported trials, matched by task name (--trials-from)",
    )
    count_stale: bool = Field(
        default=False,
        description="count imported trials that ran another version of the "
        "task (their recorded checksum differs) in the sweep (--count-stale)",
    )


class ProviderEndpoint(Section):
    """One model provider. `kind` picks the SDK; the key is read from `api_key_env`, never from config."""

    kind: str = Field(pattern="^(anthropic|openai|openai-compatible)$", description="which SDK speaks to it")
    base_url: str | None = Field(default=None, description="API base URL (OpenAI-style: with /v1)")
    base_url_env: str | None = Field(default=None, description="environment variable that may give the base URL")
    api_key_env: str | None = Field(default=None, description="environment variable holding the API key")
    timeout_sec: float = Field(default=PROVIDER_TIMEOUT_SEC, gt=0, description="one request's timeout")
    transient_retries: int = Field(
        default=PROVIDER_TRANSIENT_RETRIES, ge=0, description="our retries of 5xx/connection errors"
    )


def default_providers() -> dict[str, ProviderEndpoint]:
    return {
        "anthropic": ProviderEndpoint(
            kind="anthropic", api_key_env="ANTHROPIC_API_KEY", base_url_env="ANTHROPIC_BASE_URL"
        ),
        "openai": ProviderEndpoint(kind="openai", api_key_env="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL"),
    }


class Price(Section):
    """USD per million tokens."""

    input_per_mtok: float = Field(ge=0, description="USD per million input tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")
    cached_input_per_mtok: float | None = Field(default=None, ge=0, description="USD per million cached input tokens")


def default_prices() -> dict[str, Price]:
    table = {  # list prices (USD / Mtok); override or extend with [prices."provider/model"] in qa.toml
        "anthropic/claude-sonnet-4-5": (3.0, 15.0, 0.30),
        "anthropic/claude-opus-4-1": (15.0, 75.0, 1.50),
        "anthropic/claude-haiku-4-5": (1.0, 5.0, 0.10),
        "openai/gpt-5": (1.25, 10.0, 0.125),
        "openai/gpt-5-mini": (0.25, 2.0, 0.025),
        "openai/gpt-4.1": (2.0, 8.0, 0.50),
    }
    return {k: Price(input_per_mtok=i, output_per_mtok=o, cached_input_per_mtok=c) for k, (i, o, c) in table.items()}


class BudgetSettings(Section):
    """Caps for one run's model work; reaching one stops new trials (running ones finish) and says so."""

    max_usd: float | None = Field(default=None, ge=0, description="USD over the whole run, every model role")
    max_tokens: int | None = Field(default=None, ge=0, description="tokens over the whole run, every model role")
    max_trials: int | None = Field(default=None, ge=0, description="model trials over the whole run")


class SolverSettings(Section):
    """The solver's loop limits. Wall time comes from task.toml [agent].timeout_sec."""

    max_steps: int = Field(default=SOLVER_MAX_STEPS, ge=1, description="model turns per trial")
    max_tokens_per_trial: int = Field(
        default=SOLVER_MAX_TOKENS_PER_TRIAL, ge=1, description="tokens per trial, then it stops"
    )
    max_output_tokens: int = Field(default=SOLVER_MAX_OUTPUT_TOKENS, ge=16, description="per model call")
    command_timeout_sec: float = Field(
        default=SOLVER_COMMAND_TIMEOUT_SEC, gt=0, description="one bash command's timeout"
    )
    observation_chars: int = Field(
        default=SOLVER_OBSERVATION_CHARS, ge=200, description="a command's output kept for the model"
    )
    temperature: float | None = Field(default=None, description="sampling temperature; unset: the provider's")
    structured_retries: int = Field(
        default=STRUCTURED_RETRIES, ge=0, description="re-asks after an invalid structured answer"
    )
    # How the model acts (issue 26): "tools" = native tool calls; "text" = one fenced bash block per reply
    # (mini-swe-agent style), for served checkpoints without a tool-call parser. `model_actions` overrides it
    # per model spec, e.g. [solver.model_actions] "openai-compatible/qwen@http://127.0.0.1:8000/v1" = "text".
    actions: Literal["tools", "text"] = Field(
        default="tools",
        description="tools: native tool calls; text: one fenced bash block per reply (mini-swe-agent style)",
    )
    model_actions: dict[str, Literal["tools", "text"]] = Field(
        default_factory=dict, description="`actions` per model spec (wins over `actions`)"
    )

    def actions_for(self, model: str | None) -> str:
        return self.model_actions.get(model or "", self.actions)


class AnalystSettings(Section):
    """The trace analyst (issue 11): the model that labels what the rules could not, and the roll-up rule."""

    model: str | None = Field(default=None, description="provider/model; none = deterministic labels only")
    min_agreeing: int = Field(
        default=ANALYST_MIN_AGREEING, ge=1, description="trials (across >= 2 models) a label needs to be the task's"
    )
    trajectory_tokens: int = Field(
        default=ANALYST_TRAJECTORY_TOKENS, ge=500, description="budget for the compressed trajectory"
    )
    max_output_tokens: int = Field(default=ANALYST_MAX_OUTPUT_TOKENS, ge=256, description="per analyst call")
    wait_sec: float = Field(
        default=ANALYST_WAIT_SEC, gt=0, description="how long the graph waits for queued analyst jobs"
    )


class HunterSettings(Section):
    """The LLM shortcut hunter (issue 11): a red-team solver that tries to earn reward without the task."""

    model: str | None = Field(default=None, description="provider/model; none = scripted exploits only")
    trials: int = Field(default=HUNTER_TRIALS, ge=0, description="hunter trials per version")
