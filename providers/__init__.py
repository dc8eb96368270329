"""The model SDK adapters (Anthropic, OpenAI and any OpenAI-compatible server) behind core's `ModelClient`.

Infrastructure beside sandbox/, store/ and scheduler/: it implements a core protocol and imports no role,
graph or app. Roles and graphs never import it: they ask `envqa.core.model_client.client_for(spec, config)`,
and the app wires `create_client` here into that seam (envqa/app/__init__.py).
"""

from __future__ import annotations

from envqa.core.config import QAConfig
from envqa.core.model_client import ModelClient
from envqa.core.pricing import price_for
from envqa.providers import builtin  # noqa: F401 - registers the built-in providers
from envqa.providers.registry import provider_for, register_provider
from envqa.providers.spec import ModelSpec, api_key_for, base_url_for, endpoint_for


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
    return provider_for(endpoint.kind).factory(**args)


__all__ = ["ModelSpec", "create_client", "register_provider"]
