"""Model providers: spec parsing, SDK adapters, structured output, prices.

`create_client("anthropic/claude-sonnet-4-5", config)` is the only constructor agents need.
"""

from __future__ import annotations

from envqa.agents.providers.pricing import Spend, check_budget, cost_usd, price_for
from envqa.agents.providers.spec import ModelSpec, api_key_for, base_url_for, endpoint_for
from envqa.core.config import QAConfig
from envqa.core.model_client import Completion, Message, ModelClient, ToolCall, ToolDef, Usage


def create_client(spec_text: str, config: QAConfig) -> ModelClient:
    """Resolve provider, key (from the environment), base URL and price; raises InputError / ProviderAuthError."""
    spec = ModelSpec.parse(spec_text)
    endpoint = endpoint_for(spec, config)
    key = api_key_for(spec, endpoint)
    args = dict(
        spec=spec.spec,
        model=spec.model,
        endpoint=endpoint,
        api_key=key,
        base_url=base_url_for(endpoint),
        price=price_for(spec.spec, config),
    )
    if endpoint.kind == "anthropic":
        from envqa.agents.providers.anthropic_client import AnthropicClient

        return AnthropicClient(**args)
    from envqa.agents.providers.openai_client import OpenAIClient

    return OpenAIClient(**args)


def secret_values(config: QAConfig) -> list[str]:
    """Every configured provider key present in this process: what redaction must never let through."""
    import os

    from envqa.core.config import default_providers

    names = {e.api_key_env for e in [*config.providers.values(), *default_providers().values()] if e.api_key_env}
    return [v for n in sorted(names) if (v := os.environ.get(n)) and len(v) >= 6]


__all__ = [
    "Completion",
    "Message",
    "ModelClient",
    "ModelSpec",
    "Spend",
    "ToolCall",
    "ToolDef",
    "Usage",
    "check_budget",
    "cost_usd",
    "create_client",
    "price_for",
    "secret_values",
]
