"""Model spec strings: `provider/model`, e.g. `anthropic/claude-sonnet-4-5` or `vllm/meta-llama/Llama-3-8B`.

The provider part names an entry of `[providers]` in qa.toml (built-ins: anthropic, openai); everything
after the first slash is the model name the provider expects, slashes included.

`openai-compatible/NAME@URL` needs no config at all: an OpenAI-compatible server (vLLM, llama.cpp's
llama-server, Ollama) at URL, e.g. `openai-compatible/qwen@http://127.0.0.1:8000/v1`, with no API key.
The whole text stays the spec (queue name, price key); NAME is what the server is asked for.
"""

from __future__ import annotations

import os
import re

from pydantic import BaseModel

from envqa.core.config import ProviderEndpoint, QAConfig, default_providers
from envqa.core.errors import InputError, ProviderAuthError

INLINE_PROVIDER = "openai-compatible"
_INLINE = re.compile(r"^(?P<name>[^@]+)@(?P<url>https?://\S+)$")


class ModelSpec(BaseModel):
    provider: str
    model: str
    base_url: str | None = None  # only for the inline form openai-compatible/NAME@URL

    @property
    def spec(self) -> str:
        return f"{self.provider}/{self.model}" + (f"@{self.base_url}" if self.base_url else "")

    @classmethod
    def parse(cls, text: str, source: str = "--model") -> ModelSpec:
        provider, sep, model = text.strip().partition("/")
        if not sep or not provider or not model:
            raise InputError(
                source,
                f"model {text!r} is not of the form provider/model "
                "(e.g. anthropic/claude-sonnet-4-5, openai/gpt-5, "
                "openai-compatible/NAME@http://127.0.0.1:8000/v1)",
            )
        m = _INLINE.match(model) if provider == INLINE_PROVIDER else None
        if m is not None:
            return cls(provider=provider, model=m["name"], base_url=m["url"])
        return cls(provider=provider, model=model)


def endpoint_for(spec: ModelSpec, config: QAConfig) -> ProviderEndpoint:
    """The configured provider, falling back to the built-ins so `[providers.x]` adds rather than replaces."""
    if spec.base_url:  # openai-compatible/NAME@URL: the URL is the whole configuration, no key needed
        return ProviderEndpoint(kind="openai-compatible", base_url=spec.base_url)
    endpoint = config.providers.get(spec.provider) or default_providers().get(spec.provider)
    if endpoint is None:
        known = sorted(set(config.providers) | set(default_providers()))
        hint = (
            f"use {INLINE_PROVIDER}/NAME@URL, e.g. {INLINE_PROVIDER}/qwen@http://127.0.0.1:8000/v1"
            if spec.provider == INLINE_PROVIDER
            else f"add [providers.{spec.provider}] with kind and base_url"
        )
        raise InputError(
            "qa.toml",
            f"unknown provider {spec.provider!r} in model {spec.spec!r}; known: {', '.join(known)} ({hint})",
            "providers",
        )
    if endpoint.kind == "openai-compatible" and not (endpoint.base_url or _env(endpoint.base_url_env)):
        raise InputError(
            "qa.toml",
            f"provider {spec.provider!r} is openai-compatible and needs base_url",
            f"providers.{spec.provider}.base_url",
        )
    return endpoint


def base_url_for(endpoint: ProviderEndpoint) -> str | None:
    """Config beats the environment variable; None lets the SDK use the provider's public address."""
    return endpoint.base_url or _env(endpoint.base_url_env)


def api_key_for(spec: ModelSpec, endpoint: ProviderEndpoint) -> str:
    """The key, from the environment only. Missing is an auth error that names the variable (exit 2)."""
    if endpoint.api_key_env is None:
        return "not-needed"  # local OpenAI-compatible servers (vLLM, Ollama) usually take any key
    key = _env(endpoint.api_key_env)
    if not key:
        raise ProviderAuthError(
            f"{spec.spec}: no API key: set the environment variable {endpoint.api_key_env}", "auth", spec.spec
        )
    return key


def _env(name: str | None) -> str | None:
    return os.environ.get(name) or None if name else None
