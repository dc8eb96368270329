"""Structured output on both providers: a pydantic-validated object, malformed answers retried or reported."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from envqa.agents.structured import ANSWER_TOOL, structured_call
from envqa.core.config import load_config
from envqa.core.errors import MalformedOutput
from envqa.providers import create_client

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

PROVIDERS = ["anthropic", "openai"]


class Verdict(BaseModel):
    label: str = Field(pattern="^(capability|ambiguity|brittleness|shortcut)$")
    step_ids: list[int]
    confidence: float = Field(ge=0, le=1)


GOOD = {"label": "ambiguity", "step_ids": [3, 5], "confidence": 0.8}
BAD = {"label": "vibes", "step_ids": "three", "confidence": 7}


def answer(args: dict | None = None, raw: str | None = None) -> dict:
    call = {"name": ANSWER_TOOL, "arguments": args or {}}
    if raw is not None:
        call["raw_arguments"] = raw
    return {"tool_calls": [call], "usage": {"input": 100, "output": 20}}


@pytest.fixture
def cfg(tmp_path):
    return load_config(None, {"home": str(tmp_path / "home")})


@pytest.mark.parametrize("provider", PROVIDERS)
def test_valid_answer_first_time(provider, fake_provider, provider_env, cfg):
    srv = fake_provider({"models": {"m": {"turns": [answer(GOOD)]}}})
    provider_env(srv)
    value, meta = structured_call(create_client(f"{provider}/m", cfg), "label it", "trace...", Verdict)
    assert isinstance(value, Verdict) and value.step_ids == [3, 5] and meta.attempts == 1
    assert srv.requests[0]["tool_choice"] in (
        {"type": "tool", "name": ANSWER_TOOL},
        {"type": "function", "function": {"name": ANSWER_TOOL}},
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_malformed_answer_is_retried_with_the_validation_error(provider, fake_provider, provider_env, cfg):
    srv = fake_provider({"models": {"m": {"turns": [answer(BAD), answer(GOOD)]}}})
    provider_env(srv)
    value, meta = structured_call(create_client(f"{provider}/m", cfg), "label it", "trace...", Verdict)
    assert value.label == "ambiguity" and meta.attempts == 2 and meta.spend.calls == 2
    feedback = srv.requests[1]["last"]
    assert "Invalid answer" in feedback and "label" in feedback and "step_ids" in feedback


def test_openai_invalid_json_arguments_are_retried(fake_provider, provider_env, cfg):
    srv = fake_provider({"models": {"m": {"turns": [answer(raw='{"label": "ambiguity", '), answer(GOOD)]}}})
    provider_env(srv)
    value, meta = structured_call(create_client("openai/m", cfg), "label it", "trace...", Verdict)
    assert value.confidence == 0.8 and meta.attempts == 2
    assert "not valid JSON" in srv.requests[1]["last"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_always_malformed_is_reported_not_crashed(provider, fake_provider, provider_env, cfg):
    srv = fake_provider({"models": {"m": {"turns": [answer(BAD), {"text": "I refuse to use tools"}, answer(BAD)]}}})
    provider_env(srv)
    with pytest.raises(MalformedOutput) as info:
        structured_call(create_client(f"{provider}/m", cfg), "label it", "trace...", Verdict, retries=2)
    err = info.value
    assert err.error_class == "malformed_output" and not err.transient
    assert "after 3 attempts" in str(err) and "vibes" in err.raw
    assert len(srv.requests) == 3
