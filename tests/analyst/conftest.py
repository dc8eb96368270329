"""Fixtures for the analyst and hunter tests: the fake provider server (tests/providers) and a CLI env."""

from __future__ import annotations

import pytest

from providers.conftest import GOOD_KEY, OPENAI_KEY, fake_provider, provider_env  # noqa: F401  (fixtures)


@pytest.fixture
def cli_env(qa_env, fake_provider):  # noqa: F811
    """qa_env with both providers pointed at a fresh fake server; returns (env, server)."""

    def make(script: dict):
        srv = fake_provider({"keys": [GOOD_KEY, OPENAI_KEY], **script})
        env = dict(
            qa_env,
            ANTHROPIC_API_KEY=GOOD_KEY,
            OPENAI_API_KEY=OPENAI_KEY,
            ANTHROPIC_BASE_URL=srv.url,
            OPENAI_BASE_URL=srv.url + "/v1",
        )
        return env, srv

    return make
