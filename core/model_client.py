"""Provider-neutral conversation types and the `ModelClient` protocol every adapter implements.

The solver and the structured-output helper speak only these types; each adapter translates them to
its SDK's wire format. Keeping one neutral shape is what lets one loop drive Anthropic, OpenAI and any
OpenAI-compatible server (vLLM, Ollama, llama.cpp) unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field


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
