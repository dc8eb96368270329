"""Fixtures for provider tests: a fake provider server on 127.0.0.1 driven by a script dict."""

from __future__ import annotations

import json

import pytest

from envqa.demo.provider_server import FakeProviderServer
from envqa.demo.script import Script

GOOD_KEY = "sk-ant-test-Zq9vX4kP2mR7tL1wB8nC5dF3hJ6"
OPENAI_KEY = "sk-test-openai-Hy7Tr2Kw9Qe4Lm8Nb3Vc6Xz1"


@pytest.fixture
def fake_provider():
    """`fake_provider(script_dict)` starts a server; every server started is stopped at teardown."""
    servers = []

    def start(script: dict) -> FakeProviderServer:
        srv = FakeProviderServer(Script.model_validate(script)).start()
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.stop()


@pytest.fixture
def provider_env(monkeypatch):
    """Point both providers' keys and base URLs at a fake server (in this process)."""

    def point(srv: FakeProviderServer, anthropic_key: str = GOOD_KEY, openai_key: str = OPENAI_KEY) -> None:
        monkeypatch.setenv("ANTHROPIC_API_KEY", anthropic_key)
        monkeypatch.setenv("OPENAI_API_KEY", openai_key)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url + "/v1")

    return point


def write_script(path, script: dict):
    path.write_text(json.dumps(script))
    return path


def pytest_runtest_logreport(report):
    """With QA_TEST_FAILLOG set, append each failure as it happens (survives a crashing session hook)."""
    import os

    path = os.environ.get("QA_TEST_FAILLOG")
    if path and report.failed:
        with open(path, "a") as f:
            f.write(f"== {report.nodeid} ({report.when})\n{report.longreprtext}\n")
