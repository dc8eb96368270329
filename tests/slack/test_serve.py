"""`qa serve` without a run behind the click (no Docker): the signature gate, the 503 without a secret,
and a valid click on an unknown run answered ephemerally."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from qa_testkit import QA, wait_for

from .conftest import APPROVER, click_body, free_port, sign

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def test_signature_gate(slack_home, fake_slack, serve):
    srv = serve()
    body = click_body("run-nope", "prop-nope", APPROVER, "approve", fake_slack)
    assert srv.post(body, sign(body, secret="wrong"))[0] == 401
    assert srv.post(body, sign(body, timestamp=int(time.time()) - 6 * 60))[0] == 401
    assert srv.post(body, sign(body, timestamp=int(time.time()) - 4 * 60))[0] == 200  # inside the 5 minutes
    tampered = body.replace(b"approve", b"reject")
    assert srv.post(tampered, sign(body))[0] == 401
    assert srv.post(body, {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"})[0] == 401
    assert srv.post(b"payload=%7Bnot-json", sign(b"payload=%7Bnot-json"))[0] == 400
    # the one valid click names a run that does not exist: answered to the user, nothing else happens
    wait_for(
        lambda: any("run-nope" in c["args"].get("text", "") for c in fake_slack.calls if c["method"] == "response_url"),
        30,
        "the ephemeral answer about the unknown run",
    )
    assert [c["method"] for c in fake_slack.calls] == ["response_url"]


def test_without_signing_secret_every_click_is_refused(slack_home, fake_slack, tmp_path):
    cwd, env = slack_home
    env = {k: v for k, v in env.items() if k != "SLACK_SIGNING_SECRET"}
    port = free_port()
    proc = subprocess.Popen(
        [QA, "serve", "--port", str(port), "--json"],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        info = json.loads(proc.stdout.readline())
        assert any("SLACK_SIGNING_SECRET is not set" in w for w in info["warnings"])
        import urllib.error
        import urllib.request

        body = click_body("run-x", "prop-x", APPROVER)

        def answer():
            try:
                urllib.request.urlopen(
                    urllib.request.Request(
                        f"http://127.0.0.1:{port}/slack/interactivity", data=body, headers=sign(body)
                    ),
                    timeout=5,
                )
            except urllib.error.HTTPError as e:
                return e.code
            except (urllib.error.URLError, ConnectionError):
                return None
            return 200

        assert wait_for(answer, 30, "qa serve to answer") == 503
    finally:
        proc.terminate()
        proc.wait(20)
    assert fake_slack.calls == []
