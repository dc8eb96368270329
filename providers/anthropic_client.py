"""Anthropic Messages API through the official `anthropic` SDK (no hand-written HTTP)."""

from __future__ import annotations

from typing import Any

import anthropic

from envqa.core.config import Price, ProviderEndpoint
from envqa.core.model_client import Completion, Message, ToolCall, ToolDef, Usage
from envqa.core.pricing import cost_usd
from envqa.providers._retry import call_with_retries


class AnthropicClient:
    def __init__(
        self, spec: str, model: str, endpoint: ProviderEndpoint, api_key: str, base_url: str | None, price: Price | None
    ):
        self.spec, self.model, self.endpoint, self.price = spec, model, endpoint, price
        self._sdk = anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=endpoint.timeout_sec)

    def complete(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolDef] | None = None,
        *,
        tool_choice: str | None = None,
        max_tokens: int = 4096,
        temperature: float | None = None,
    ) -> Completion:
        kwargs: dict[str, Any] = dict(
            model=self.model, system=system, messages=to_anthropic(messages), max_tokens=max_tokens
        )
        if tools:
            kwargs["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools
            ]
            if tool_choice == "required":
                kwargs["tool_choice"] = {"type": "any"}
            elif tool_choice:
                kwargs["tool_choice"] = {"type": "tool", "name": tool_choice}
        if temperature is not None:
            kwargs["temperature"] = temperature
        resp = call_with_retries(
            lambda: self._sdk.messages.create(**kwargs),
            model=self.spec,
            key_env=self.endpoint.api_key_env,
            retries=self.endpoint.transient_retries,
        )
        text, calls = [], []
        for block in resp.content:
            if block.type == "text":
                text.append(block.text)
            elif block.type == "tool_use":
                args = block.input if isinstance(block.input, dict) else {}
                err = None if isinstance(block.input, dict) else "tool input is not a JSON object"
                calls.append(ToolCall(id=block.id, name=block.name, arguments=args, arguments_error=err))
        u = resp.usage
        usage = Usage(
            input_tokens=(u.input_tokens or 0) + (getattr(u, "cache_read_input_tokens", 0) or 0),
            output_tokens=u.output_tokens or 0,
            cached_input_tokens=getattr(u, "cache_read_input_tokens", 0) or 0,
        )
        return Completion(
            text="".join(text),
            tool_calls=calls,
            stop_reason=resp.stop_reason,
            usage=usage,
            cost_usd=cost_usd(usage, self.price),
            model=self.spec,
        )


def to_anthropic(messages: list[Message]) -> list[dict]:
    """Neutral -> Anthropic: tool results become tool_result blocks in one user turn."""
    out: list[dict] = []
    for m in messages:
        if m.role == "user":
            out.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            blocks: list[dict] = [{"type": "text", "text": m.content}] if m.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no reply)"}]})
        else:
            block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out
