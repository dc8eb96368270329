"""The anthropic and openai adapters, through the real SDKs, against the fake provider server over HTTP."""

from __future__ import annotations

import pytest

from envqa.core.config import load_config
from envqa.core.errors import (
    ContextTooLong,
    InputError,
    ProviderAuthError,
    ProviderOverloaded,
    RateLimited,
    TransientProviderError,
)
from envqa.core.model_client import Message, ToolDef
from envqa.providers import create_client
from envqa.providers.spec import ModelSpec

from .conftest import GOOD_KEY, OPENAI_KEY

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

PROVIDERS = ["anthropic", "openai"]
BASH = ToolDef(
    name="bash",
    description="run",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)


def config(tmp_path, **overrides):
    return load_config(None, {"home": str(tmp_path / "home"), **overrides})


@pytest.mark.parametrize("provider", PROVIDERS)
def test_tool_call_round_trip_and_cost(provider, fake_provider, provider_env, tmp_path):
    srv = fake_provider(
        {
            "keys": [GOOD_KEY, OPENAI_KEY],
            "models": {
                "m": {
                    "turns": [
                        {
                            "text": "looking",
                            "tool_calls": [{"name": "bash", "arguments": {"command": "ls /app"}}],
                            "usage": {"input": 2_000_000, "output": 100_000},
                        },
                        {"text": "all done", "usage": {"input": 10, "output": 5}},
                    ]
                }
            },
        }
    )
    provider_env(srv)
    cfg = config(tmp_path, **{f"prices.{provider}/m": {"input_per_mtok": 2.0, "output_per_mtok": 10.0}})
    client = create_client(f"{provider}/m", cfg)
    first = client.complete("sys", [Message(role="user", content="task")], [BASH])
    assert first.text == "looking"
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("bash", {"command": "ls /app"})]
    assert (first.usage.input_tokens, first.usage.output_tokens) == (2_000_000, 100_000)
    assert first.cost_usd == pytest.approx(2 * 2.0 + 0.1 * 10.0)
    # The tool result goes back in the provider's own format; the server sees one assistant turn -> turn 2.
    history = [
        Message(role="user", content="task"),
        first.as_message(),
        Message(role="tool", tool_call_id=first.tool_calls[0].id, content="exit_code: 0"),
    ]
    second = client.complete("sys", history, [BASH])
    assert second.text == "all done" and second.tool_calls == []
    seen = srv.requests[-1]
    assert seen["dialect"] == provider and seen["tools"] == ["bash"]
    assert "exit_code: 0" in seen["last"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_raises_rate_limited_with_retry_after_and_no_sdk_retry(provider, fake_provider, provider_env, tmp_path):
    srv = fake_provider({"models": {"*": {"faults": [{"status": 429, "retry_after": 7, "times": -1}]}}})
    provider_env(srv)
    client = create_client(f"{provider}/m", config(tmp_path))
    with pytest.raises(RateLimited) as info:
        client.complete("sys", [Message(role="user", content="hi")])
    assert info.value.retry_after == 7.0 and info.value.error_class == "rate_limited"
    assert info.value.model == f"{provider}/m"
    assert len(srv.requests) == 1  # parked by the scheduler, not slept through inside the SDK


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_500_is_retried_a_persistent_one_is_transient(provider, fake_provider, provider_env, tmp_path):
    srv = fake_provider(
        {
            "models": {
                "flaky": {"faults": [{"status": 500, "times": 1}], "turns": [{"text": "ok"}]},
                "down": {"faults": [{"status": 500, "times": -1}]},
            }
        }
    )
    provider_env(srv)
    cfg = config(
        tmp_path,
        **{
            f"providers.{provider}": {
                "kind": provider,
                "api_key_env": f"{provider.upper()}_API_KEY",
                "base_url_env": f"{provider.upper()}_BASE_URL",
                "transient_retries": 2,
            }
        },
    )
    assert create_client(f"{provider}/flaky", cfg).complete("s", [Message(role="user", content="x")]).text == "ok"
    with pytest.raises(TransientProviderError) as info:
        create_client(f"{provider}/down", cfg).complete("s", [Message(role="user", content="x")])
    assert info.value.transient and "500" in str(info.value)
    assert sum(r["model"] == "down" for r in srv.requests) == 3  # 1 try + 2 retries


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_key_is_auth_error_naming_the_variable(provider, fake_provider, provider_env, tmp_path):
    srv = fake_provider({"keys": ["the-right-key-123"], "models": {}})
    provider_env(srv)
    with pytest.raises(ProviderAuthError) as info:
        create_client(f"{provider}/m", config(tmp_path)).complete("s", [Message(role="user", content="x")])
    var = f"{provider.upper()}_API_KEY"
    assert var in str(info.value) and info.value.exit_code == 2 and not info.value.transient
    assert GOOD_KEY not in str(info.value) and OPENAI_KEY not in str(info.value)


def test_missing_key_fails_before_any_request(monkeypatch, tmp_path):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ProviderAuthError, match="set the environment variable ANTHROPIC_API_KEY"):
        create_client("anthropic/claude-sonnet-4-5", config(tmp_path))


def test_overloaded_and_context_too_long(fake_provider, provider_env, tmp_path):
    srv = fake_provider(
        {
            "models": {
                "busy": {"faults": [{"status": 529, "times": -1}]},
                "long": {
                    "faults": [
                        {"status": 400, "message": "prompt is too long: 250000 tokens > 200000 maximum", "times": -1}
                    ]
                },
                "olong": {
                    "faults": [
                        {"status": 400, "message": "This model's maximum context length is 8192 tokens", "times": -1}
                    ]
                },
            }
        }
    )
    provider_env(srv)
    cfg = config(tmp_path)
    with pytest.raises(ProviderOverloaded):
        create_client("anthropic/busy", cfg).complete("s", [Message(role="user", content="x")])
    with pytest.raises(ContextTooLong):
        create_client("anthropic/long", cfg).complete("s", [Message(role="user", content="x")])
    with pytest.raises(ContextTooLong):
        create_client("openai/olong", cfg).complete("s", [Message(role="user", content="x")])


def test_slow_provider_times_out_as_transient(fake_provider, provider_env, tmp_path):
    srv = fake_provider({"models": {"slow": {"turns": [{"text": "late", "delay": 3}]}}})
    provider_env(srv)
    cfg = config(
        tmp_path,
        **{
            "providers.anthropic": {
                "kind": "anthropic",
                "api_key_env": "ANTHROPIC_API_KEY",
                "base_url_env": "ANTHROPIC_BASE_URL",
                "timeout_sec": 0.5,
                "transient_retries": 0,
            }
        },
    )
    with pytest.raises(TransientProviderError) as info:
        create_client("anthropic/slow", cfg).complete("s", [Message(role="user", content="x")])
    assert info.value.error_class == "provider_timeout"


def test_openai_compatible_endpoint_by_base_url_without_key(fake_provider, monkeypatch, tmp_path):
    srv = fake_provider({"models": {"llama3": {"turns": [{"text": "hello from vllm"}]}}})
    cfg = config(tmp_path, **{"providers.vllm": {"kind": "openai-compatible", "base_url": srv.url + "/v1"}})
    client = create_client("vllm/llama3", cfg)
    assert client.complete("s", [Message(role="user", content="x")]).text == "hello from vllm"
    assert srv.requests[-1]["dialect"] == "openai"


def test_model_specs_and_unknown_providers(tmp_path):
    assert ModelSpec.parse("vllm/meta-llama/Llama-3-8B").model == "meta-llama/Llama-3-8B"
    with pytest.raises(InputError, match="provider/model"):
        ModelSpec.parse("claude")
    with pytest.raises(InputError, match="unknown provider 'mistral'"):
        create_client("mistral/large", config(tmp_path))
    with pytest.raises(InputError, match="needs base_url"):
        create_client("local/x", config(tmp_path, **{"providers.local": {"kind": "openai-compatible"}}))
