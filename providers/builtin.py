"""The built-in providers: Anthropic's Messages API, and OpenAI's Chat Completions (OpenAI itself and any
OpenAI-compatible server: vLLM, llama.cpp's llama-server, Ollama). Each factory imports its adapter, and so its
SDK, only when a client is made."""

from __future__ import annotations

from envqa.core.model_client import ModelClient
from envqa.providers.registry import register_provider


@register_provider("anthropic", sdk="anthropic")
def anthropic_client(**args) -> ModelClient:
    from envqa.providers.anthropic_client import AnthropicClient

    return AnthropicClient(**args)


@register_provider("openai", sdk="openai")
def openai_client(**args) -> ModelClient:
    from envqa.providers.openai_client import OpenAIClient

    return OpenAIClient(**args)


register_provider("openai-compatible", sdk="openai")(openai_client)
