"""The fake provider enforcing a model's own concurrency limit, as real providers do: a request that arrives
while `concurrency` of that model's are in progress gets 429 + Retry-After, through the real SDKs; other
models and later requests are unaffected. benchmarks/scheduler.py relies on it (and on each request's
`inflight` count) to measure requests sent beyond a provider's limit."""

from __future__ import annotations

import threading
import time

import anthropic
import openai
import pytest

from tests.providers.conftest import GOOD_KEY, OPENAI_KEY

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres

SLOW = 1.5  # seconds each limited reply takes: the two calls hold both slots while the third arrives


def _wait_for(cond, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_a_request_beyond_the_models_limit_gets_429_with_retry_after(fake_provider):
    srv = fake_provider(
        {
            "models": {
                "limited": {"concurrency": 2, "concurrency_retry_after": 3, "turns": [{"text": "ok", "delay": SLOW}]},
                "*": {"turns": [{"text": "free"}]},
            }
        }
    )
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url=srv.url + "/v1", max_retries=0, timeout=20)
    replies: list = []

    def call() -> None:
        replies.append(client.chat.completions.create(model="limited", messages=[{"role": "user", "content": "x"}]))

    holders = [threading.Thread(target=call) for _ in range(2)]
    for t in holders:
        t.start()
    _wait_for(lambda: sum(bool(r.get("inflight")) for r in srv.requests) == 2, "both slots taken")

    with pytest.raises(openai.RateLimitError) as refused:
        client.chat.completions.create(model="limited", messages=[{"role": "user", "content": "x"}])
    assert refused.value.response.headers["retry-after"] == "3"
    # another model is not limited by this one's slots
    other = client.chat.completions.create(model="other", messages=[{"role": "user", "content": "x"}])
    assert other.choices[0].message.content == "free"
    # the anthropic dialect refuses alike
    a_client = anthropic.Anthropic(api_key=GOOD_KEY, base_url=srv.url, max_retries=0, timeout=20)
    with pytest.raises(anthropic.RateLimitError):
        a_client.messages.create(model="limited", max_tokens=10, messages=[{"role": "user", "content": "x"}])

    for t in holders:
        t.join(timeout=20)
        assert not t.is_alive()
    assert [r.choices[0].message.content for r in replies] == ["ok", "ok"]
    # once the slots are free a request is admitted again, and the log says what was in progress on arrival
    again = client.chat.completions.create(model="limited", messages=[{"role": "user", "content": "x"}])
    assert again.choices[0].message.content == "ok"
    limited = [r for r in srv.requests if r["model"] == "limited"]
    assert [(r["status"], r["inflight"], r.get("over_limit", False)) for r in limited] == [
        (200, 1, False),
        (200, 2, False),
        (429, None, True),
        (429, None, True),
        (200, 1, False),
    ]


def test_without_a_limit_requests_are_only_counted(fake_provider):
    srv = fake_provider({"models": {"*": {"turns": [{"text": "ok", "delay": 3}]}}})
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url=srv.url + "/v1", max_retries=0, timeout=20)
    threads = []
    for i in range(3):  # each starts once the previous one is in progress: all three overlap
        threads.append(
            threading.Thread(
                target=client.chat.completions.create,
                kwargs={"model": "m", "messages": [{"role": "user", "content": "x"}]},
            )
        )
        threads[-1].start()
        _wait_for(lambda i=i: sum(bool(r.get("inflight")) for r in srv.requests) == i + 1, f"request {i + 1}")
    for t in threads:
        t.join(timeout=20)
    assert sorted(r["inflight"] for r in srv.requests) == [1, 2, 3]
    assert all(r["status"] == 200 for r in srv.requests)


def test_a_storm_fault_ends_after_its_window(fake_provider):
    """`window_sec`: the fault answers every request within that many seconds of the model's first one."""
    srv = fake_provider(
        {
            "models": {
                "*": {
                    "turns": [{"text": "ok"}],
                    "faults": [{"status": 429, "retry_after": 1, "times": -1, "window_sec": 1.0}],
                }
            }
        }
    )
    client = openai.OpenAI(api_key=OPENAI_KEY, base_url=srv.url + "/v1", max_retries=0, timeout=20)
    started = time.monotonic()
    refused = 0
    while True:
        try:
            reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            break
        except openai.RateLimitError as e:
            assert e.response.headers["retry-after"] == "1"
            refused += 1
            assert time.monotonic() - started < 10, "the storm never ended"
            time.sleep(0.05)
    assert refused >= 1 and reply.choices[0].message.content == "ok"
    assert time.monotonic() - started >= 1.0  # not before the window closed
