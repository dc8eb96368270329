"""The SDK adapters and structured output against a real model server (llama-server + SmolLM2-135M).

What the fake server never did and this one does: real usage figures (and prompt-cache hits), prose where a
tool call was asked for (llama-server ignores a named `tool_choice` for a chat template without tools and
only logs a warning), truncation at max_tokens, and its own wording for a prompt longer than the context.
Every test here must hold whatever the sampled text is: the model is real, its words are not ours.
"""

from __future__ import annotations

import time

import openai
import pytest
from pydantic import BaseModel, Field

from envqa.agents.structured import structured_call
from envqa.core.config import load_config
from envqa.core.errors import ContextTooLong, MalformedOutput
from envqa.core.model_client import Message
from envqa.providers import create_client

from .conftest import CONTEXT_TOKENS

pytestmark = pytest.mark.fast  # needs only the venv and the fetched server: no Docker, Redis or Postgres


def local_config(tmp_path, server, kind: str = "openai", **extra):
    """`[providers.local]` pointing at the server, no api_key_env (a local model needs no key), no price."""
    return load_config(
        None,
        {"home": str(tmp_path / "home"), "providers": {"local": {"kind": kind, "base_url": server.base_url}}, **extra},
    )


class Verdict(BaseModel):
    label: str = Field(pattern="^(capability|ambiguity|brittleness|shortcut)$")
    step_ids: list[int]
    confidence: float = Field(ge=0, le=1)


def test_openai_sdk_sees_real_usage_figures(llama_server):
    sdk = openai.OpenAI(base_url=llama_server.base_url, api_key="not-needed", max_retries=0, timeout=60)
    started = time.monotonic()
    resp = sdk.chat.completions.create(
        model=llama_server.model,
        max_tokens=48,
        temperature=0,
        seed=1,
        messages=[{"role": "user", "content": "Name one Unix shell command."}],
    )
    elapsed = time.monotonic() - started
    assert resp.choices[0].message.content.strip()
    assert resp.usage.prompt_tokens > 0 and resp.usage.completion_tokens > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    timings = (resp.model_extra or {}).get("timings") or {}  # llama-server's own figures, beside `usage`
    assert timings.get("predicted_n") == resp.usage.completion_tokens
    print(
        f"\nllama-server: started in {llama_server.start_sec:.2f}s; {resp.usage.completion_tokens} tokens in "
        f"{elapsed:.2f}s, {timings.get('predicted_per_second', 0):.0f} tokens/s generated, "
        f"{timings.get('prompt_per_second', 0):.0f} tokens/s prompt"
    )


@pytest.mark.parametrize("kind", ["openai", "openai-compatible"])  # max_completion_tokens vs max_tokens
def test_envqa_adapter_records_usage_and_zero_cost(llama_server, tmp_path, monkeypatch, kind):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = create_client("local/smollm2", local_config(tmp_path, llama_server, kind))
    reply = client.complete(
        "You are terse.", [Message(role="user", content="Say hello.")], max_tokens=32, temperature=0
    )
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0
    assert reply.cost_usd == 0.0  # no price is configured for a local model (pricing.price_for -> None)
    assert reply.model == "local/smollm2" and reply.stop_reason in ("stop", "length")


def test_truncation_at_max_tokens_is_a_length_stop(llama_server, tmp_path):
    client = create_client("local/smollm2", local_config(tmp_path, llama_server))
    reply = client.complete(
        "", [Message(role="user", content="Write a long story about a lighthouse.")], max_tokens=6, temperature=0
    )
    assert reply.stop_reason == "length" and 0 < reply.usage.output_tokens <= 6 and reply.text


def test_prompt_longer_than_the_context_is_context_too_long(llama_server, tmp_path):
    """llama-server answers 400 "request (N tokens) exceeds the available context size (8192 tokens)"."""
    client = create_client("local/smollm2", local_config(tmp_path, llama_server))
    with pytest.raises(ContextTooLong) as err:
        client.complete("", [Message(role="user", content="word " * (CONTEXT_TOKENS + 500))], max_tokens=8)
    assert "exceeds the available context size" in str(err.value)


def test_structured_call_with_a_model_that_never_calls_the_tool_fails_cleanly(llama_server, tmp_path):
    """SmolLM2 answers the forced `submit_answer` call in prose: every attempt is repaired, then MalformedOutput
    (the typed error the roles turn into `unverified`/dropped results), after exactly structured_retries + 1
    calls, with the spend of every call counted and the raw reply kept for the record."""
    cfg = local_config(tmp_path, llama_server, solver={"structured_retries": 1})
    client = create_client("local/smollm2", cfg)
    started = time.monotonic()
    try:
        value, meta = structured_call(
            client,
            "Label the failed trial.",
            "step 1: ls; step 2: pytest failed",
            Verdict,
            retries=cfg.solver.structured_retries,
            max_tokens=96,
        )
    except MalformedOutput as e:
        assert e.error_class == "malformed_output" and not e.transient
        assert "after 2 attempts" in str(e) and e.raw  # what the model said instead, for the record
        print(f"\nstructured_call: MalformedOutput after {time.monotonic() - started:.1f}s: {str(e)[:160]}")
    else:  # a real model may, rarely, get it right: then the answer must be a valid Verdict
        assert isinstance(value, Verdict) and meta.attempts <= 2 and meta.spend.calls == meta.attempts


def test_inline_spec_needs_no_config_and_no_key(llama_server, tmp_path, monkeypatch):
    """`openai-compatible/NAME@URL`: the URL is the whole configuration (docs/guide/solver-models.md, "QA against your own model")."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = f"openai-compatible/{llama_server.model}@{llama_server.base_url}"
    client = create_client(spec, load_config(None, {"home": str(tmp_path / "home")}))
    reply = client.complete("", [Message(role="user", content="Say hello.")], max_tokens=16, temperature=0)
    assert reply.usage.input_tokens > 0 and reply.usage.output_tokens > 0 and reply.cost_usd == 0.0
    assert reply.model == spec
