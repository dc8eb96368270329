"""Fixtures for the Slack tests: a fake Slack Web API on 127.0.0.1 (the real slack_sdk talks to it), a
qa.toml pointing at it, a real `qa serve` process, and signed interaction payloads."""

from __future__ import annotations

import hashlib
import hmac
import json
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from envqa.demo.slack_server import FakeSlackServer
from qa_testkit import QA, wait_for

# Distinctive values so that a grep for them over outputs, logs and QA_HOME can only find a leak.
BOT_TOKEN = "xoxb-envqa-test-7Rk2Lq9Zt4Wm1Xc8Vb"
SIGNING_SECRET = "envqa-signing-secret-Hq3Np8Yd5Ks2Jf7"
APPROVER = "U0APPROVER"
GROUP = "S0REVIEWERS"
GROUP_MEMBER = "U0INGROUP"
OUTSIDER = "U0OUTSIDER"
CHANNEL = "C0ENVQA"


@pytest.fixture
def fake_slack():
    with FakeSlackServer(BOT_TOKEN, groups={GROUP: [GROUP_MEMBER]}) as srv:
        yield srv


@pytest.fixture
def slack_home(tmp_path, fake_slack):
    """A working directory with a qa.toml whose [slack] section points at the fake; returns (cwd, env)."""
    import os

    cwd = tmp_path / "work"
    cwd.mkdir()
    (cwd / "qa.toml").write_text(
        "[slack]\n"
        f'channel = "{CHANNEL}"\n'
        f'approvers = ["{APPROVER}", "{GROUP}"]\n'
        'notify = ["approval", "findings", "incomplete"]\n'
        'report_base_url = "http://qa.example.test:8765"\n'
        f'api_base_url = "{fake_slack.api_url}"\n'
        "send_budget_sec = 8\n"
        "flush_timeout_sec = 15\n"
        # Slack is what these tests are about: the hunt runs only what reward-tamper needs, once.
        "[probes]\n"
        'enabled = ["static", "exploits"]\n'
        'exploits = ["exploit-reward-tamper"]\n'
        "oracle_runs = 1\n"
    )
    env = dict(os.environ)
    env.update(
        QA_HOME=str(tmp_path / "qa-home"),
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        QA_LOG_LEVEL="info",
    )
    env.pop("REDIS_URL", None)
    return cwd, env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServeProcess:
    def __init__(self, cwd: Path, env: dict, log_dir: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.stdout_path, self.stderr_path = log_dir / "serve.out", log_dir / "serve.err"
        self.proc = subprocess.Popen(
            [QA, "serve", "--port", str(self.port)],
            cwd=cwd,
            env=env,
            stdout=self.stdout_path.open("w"),
            stderr=self.stderr_path.open("w"),
        )
        wait_for(self._healthy, 30, f"qa serve on port {self.port} to answer /healthz")

    def _healthy(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"qa serve exited {self.proc.returncode}: {self.stderr_path.read_text()}")
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=2) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError):
            return False

    def post(self, body: bytes, headers: dict) -> tuple[int, float]:
        """POST to /slack/interactivity; (status, seconds it took to answer)."""
        req = urllib.request.Request(
            self.url + "/slack/interactivity",
            data=body,
            method="POST",
            headers={"content-type": "application/x-www-form-urlencoded", **headers},
        )
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, time.monotonic() - t0
        except urllib.error.HTTPError as e:
            return e.code, time.monotonic() - t0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def serve(slack_home, tmp_path):
    cwd, env = slack_home
    procs: list[ServeProcess] = []

    def start() -> ServeProcess:
        p = ServeProcess(cwd, env, tmp_path)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.stop()


def click_body(
    run_id: str,
    proposal_id: str,
    user: str,
    action: str = "approve",
    fake: FakeSlackServer | None = None,
    channel: str = CHANNEL,
    message_ts: str = "1700000000.000001",
    blocks: list | None = None,
) -> bytes:
    """A block_actions payload as Slack sends it (form-encoded `payload=<json>`)."""
    value = json.dumps({"run_id": run_id, "proposal_id": proposal_id})
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower()},
        "team": {"id": "T0FAKE"},
        "channel": {"id": channel},
        "container": {"type": "message", "channel_id": channel, "message_ts": message_ts},
        "message": {"ts": message_ts, "blocks": blocks or []},
        "response_url": f"{fake.url}/_fake/response/{user}-{action}" if fake else None,
        "actions": [
            {
                "action_id": f"envqa_{action}",
                "block_id": "envqa_decision",
                "value": value,
                "type": "button",
                "action_ts": str(time.time()),
            }
        ],
    }
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def sign(body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}
