"""OpenAI Chat Completions through the official `openai` SDK; also any OpenAI-compatible server
(vLLM, Ollama, llama.cpp) reached by base URL."""

from __future__ import annotations

import json
from typing import Any

import openai

from envqa.core.config import Price, ProviderEndpoint
from envqa.core.model_client import Completion, Message, ToolCall, ToolDef, Usage
from envqa.core.pricing import cost_usd
from envqa.providers._retry import call_with_retries


class OpenAIClient:
    def __init__(
        self, spec: str, model: str, endpoint: ProviderEndpoint, api_key: str, base_url: str | None, price: Price | None
    ):
        self.spec, self.model, self.endpoint, self.price = spec, model, endpoint, price
        self._sdk = openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=endpoint.timeout_sec)

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
        kwargs: dict[str, Any] = dict(model=self.model, messages=to_openai(system, messages))
        # OpenAI's own models take max_completion_tokens; older compatible servers only know max_tokens.
        kwargs["max_completion_tokens" if self.endpoint.kind == "openai" else "max_tokens"] = max_tokens
        if tools:
            kwargs["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in tools
            ]
            if tool_choice == "required":
                kwargs["tool_choice"] = "required"
            elif tool_choice:
                kwargs["tool_choice"] = {"type": "function", "function": {"name": tool_choice}}
        if temperature is not None:
            kwargs["temperature"] = temperature
        resp = call_with_retries(
            lambda: self._sdk.chat.completions.create(**kwargs),
            model=self.spec,
            key_env=self.endpoint.api_key_env,
            retries=self.endpoint.transient_retries,
        )
        choice = resp.choices[0]
        calls = [_tool_call(tc) for tc in (choice.message.tool_calls or [])]
        u = resp.usage
        cached = 0
        if u is not None and getattr(u, "prompt_tokens_details", None) is not None:
            cached = u.prompt_tokens_details.cached_tokens or 0
        usage = Usage(
            input_tokens=(u.prompt_tokens if u else 0) or 0,
            output_tokens=(u.completion_tokens if u else 0) or 0,
            cached_input_tokens=cached,
        )
        return Completion(
            text=choice.message.content or "",
            tool_calls=calls,
            stop_reason=choice.finish_reason,
            usage=usage,
            cost_usd=cost_usd(usage, self.price),
            model=self.spec,
        )


def _tool_call(tc) -> ToolCall:
    raw = tc.function.arguments or "{}"
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as e:
        return ToolCall(
            id=tc.id,
            name=tc.function.name,
            arguments={"_raw": raw[:2000]},
            arguments_error=f"arguments are not valid JSON: {e}",
        )
    if not isinstance(args, dict):
        return ToolCall(
            id=tc.id,
            name=tc.function.name,
            arguments={"_raw": raw[:2000]},
            arguments_error="arguments are not a JSON object",
        )
    return ToolCall(id=tc.id, name=tc.function.name, arguments=args)


def to_openai(system: str, messages: list[Message]) -> list[dict]:
    out: list[dict] = [{"role": "system", "content": system}] if system else []
    for m in messages:
        if m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in m.tool_calls
                ]
            out.append(msg)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        else:
            out.append({"role": "user", "content": m.content})
    return out
