"""Provider-neutral conversation types, the `ModelClient` protocol every adapter implements, and the one seam
through which roles and graphs get a client.

The solver and the structured-output helper speak only these types; each adapter translates them to
its SDK's wire format. Keeping one neutral shape is what lets one loop drive Anthropic, OpenAI and any
OpenAI-compatible server (vLLM, Ollama, llama.cpp) unchanged.

The adapters live in envqa.providers (infrastructure, like sandbox/ and store/), which no role, graph or core
module imports (import-linter holds it). A role asks `client_for(spec, config)`; the app wires the factory once,
on import of envqa.app (envqa/app/__init__.py), as it wires the Slack notifier into core/notify.py. Every process
that runs a role through qa (the CLI, a worker running a job body from envqa.app.jobs, the Harbor plugin)
imports envqa.app first.
"""

from __future__ import annotations

import os
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from envqa.core.config import QAConfig, default_providers


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    # Set when the model produced arguments that are not a JSON object: the loop reports it back.
    arguments_error: str | None = None


class Message(BaseModel):
    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None  # role == "tool": which call this observation answers


class ToolDef(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
        )


class Completion(BaseModel):
    """One model reply: text, tool calls, token usage, and its USD cost (0 when the model is unpriced)."""

    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float = 0.0
    model: str = ""

    def as_message(self) -> Message:
        return Message(role="assistant", content=self.text, tool_calls=self.tool_calls)


class ModelClient(Protocol):
    """What agents need from a model: one call, neutral types in and out, typed errors (envqa.core.errors)."""

    spec: str  # "provider/model", the queue name and price-table key

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolDef] | None = None,
        *,
        tool_choice: str | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
    ) -> Completion: ...


class ModelClientFactory(Protocol):
    """Builds the client for a `provider/model` spec, resolving key, base URL and price from config; raises
    InputError (a malformed spec, an unknown provider) or ProviderAuthError (no key). envqa.providers.create_client."""

    def __call__(self, spec_text: str, config: QAConfig) -> ModelClient: ...


_factory: ModelClientFactory | None = None


def use_model_clients(factory: ModelClientFactory) -> None:
    """The app's wiring step (envqa/app/__init__.py): the factory every `client_for` call goes through."""
    global _factory
    _factory = factory


def client_for(spec_text: str, config: QAConfig) -> ModelClient:
    """A client for `spec_text` from the wired factory. Unwired is a programming error, said plainly."""
    if _factory is None:
        raise RuntimeError(
            "no model client factory is wired: import envqa.app first (it wires envqa.providers.create_client "
            "through envqa.core.model_client.use_model_clients)"
        )
    return _factory(spec_text, config)


def secret_values(config: QAConfig) -> list[str]:
    """Every configured provider key present in this process: what redaction must never let through."""
    names = {e.api_key_env for e in [*config.providers.values(), *default_providers().values()] if e.api_key_env}
    return [v for n in sorted(names) if (v := os.environ.get(n)) and len(v) >= 6]
