"""The Slack notifier against the fake Slack Web API (real slack_sdk WebClient over HTTP on 127.0.0.1):
what the approval message carries, the diff file, the thread, and Slack failing (429, 500, down)."""

from __future__ import annotations

import time

import pytest

from envqa.app.slack import notifier as slack_notifier
from envqa.app.slack.notifier import SlackNotifier, flush
from envqa.core.config import load_config

from .conftest import APPROVER, BOT_TOKEN, CHANNEL, SIGNING_SECRET

DIFF = "--- a/tests/test_outputs.py\n+++ b/tests/test_outputs.py\n" + "".join(
    f"@@ -{i},1 +{i},1 @@\n-old line {i}\n+new line {i}\n" for i in range(1, 30)
)


def _config(tmp_path, fake, **slack):
    overrides = {
        "home": str(tmp_path / "qa-home"),
        "slack.channel": CHANNEL,
        "slack.approvers": [APPROVER],
        "slack.api_base_url": fake.api_url,
        "slack.report_base_url": "http://qa.example.test:8765",
        "slack.send_budget_sec": 6.0,
    }
    overrides.update({f"slack.{k}": v for k, v in slack.items()})
    return load_config(None, overrides)


def _payload(run_id="run-post1", proposal_id="prop-1") -> dict:
    return {
        "run_id": run_id,
        "env_name": "reward-tamper",
        "version": "a" * 64,
        "iteration": 1,
        "report_path": f"/tmp/{run_id}/report.json",
        "findings": [
            {"rule": "reward-file-writable", "label": "shortcut", "message": "the agent can write the reward"}
        ],
        "proposal": {
            "proposal_id": proposal_id,
            "run_id": run_id,
            "author": "fixer:reward-file-writable",
            "addresses": ["reward-file-writable"],
            "labels": ["shortcut"],
            "diff": DIFF,
            "rationale": "write the reward from the verifier only",
            "expected_effect": ["exploit fails"],
            "gate": {
                "passed": True,
                "checks": [
                    {"name": "oracle passes", "passed": True, "detail": "3/3"},
                    {"name": "exploit fails", "passed": True, "detail": "0/1"},
                ],
            },
        },
        "sweep": {
            "band": [0.1, 0.3],
            "models": {
                "anthropic/claude-sonnet-4-5": {
                    "passes": 4,
                    "n": 5,
                    "pass_at_1": 0.8,
                    "ci_low": 0.38,
                    "ci_high": 0.96,
                    "band_decision": "above",
                }
            },
        },
    }


@pytest.fixture
def slack_env(monkeypatch):
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SIGNING_SECRET)


@pytest.mark.fast
def test_approval_message_diff_file_and_thread(tmp_path, fake_slack, slack_env):
    cfg = _config(tmp_path, fake_slack)
    notify = SlackNotifier(cfg)
    notify("awaiting_approval", _payload())
    notify(
        "gate_result",
        {
            "run_id": "run-post1",
            "env_name": "reward-tamper",
            "version": "b" * 64,
            "gate": {"passed": True, "checks": [{"name": "oracle passes", "passed": True}]},
        },
    )
    notify("adopted", {"run_id": "run-post1", "env_name": "reward-tamper", "version": "b" * 64, "iteration": 1})
    notify(
        "budget_stop",
        {
            "run_id": "run-post1",
            "env_name": "reward-tamper",
            "version": "b" * 64,
            "stop_reason": "budget: spent $2.0100 of max_usd=$2",
        },
    )
    notify(
        "run_finished",
        {
            "run_id": "run-post1",
            "env_name": "reward-tamper",
            "version": "b" * 64,
            "verdict": "clean",
            "stop_reason": "in_band_and_clean",
        },
    )
    assert flush(20), "the Slack outbox did not drain"

    posts = fake_slack.calls_to("chat.postMessage", ok_only=True)
    assert len(posts) == 5, posts
    root = posts[0]["args"]
    assert root["channel"] == CHANNEL and "thread_ts" not in root
    text = str(root["blocks"])
    for expected in (
        "reward-tamper",
        "aaaaaaaaaaaa",
        "Iteration* 1",
        "`reward-file-writable` [shortcut]",
        "anthropic/claude-sonnet-4-5",
        "4/5 = 80%",
        "above",
        "band 10%–30%",
        "gate passed",
        "exploit fails: 0/1",
        "+new line 1",
        "more lines in the attached file",
    ):
        assert expected in text, f"{expected!r} missing from the approval message"
    actions = next(b for b in root["blocks"] if b["type"] == "actions")["elements"]
    assert [a.get("action_id") for a in actions] == ["envqa_approve", "envqa_reject", "envqa_report"]
    assert actions[0]["value"] == '{"run_id":"run-post1","proposal_id":"prop-1"}' == actions[1]["value"]
    assert actions[2]["url"] == "http://qa.example.test:8765/runs/run-post1/report.html"

    thread_ts = posts[0]["ts"]
    assert all(p["args"]["thread_ts"] == thread_ts for p in posts[1:])
    assert "gate passed" in posts[1]["args"]["text"] and "Adopted" in posts[2]["args"]["text"]
    assert "Budget stop on run `run-post1`: budget: spent $2.0100 of max_usd=$2" in posts[3]["args"]["text"]
    assert "finished: *clean*" in posts[4]["args"]["text"] and posts[4]["args"]["reply_broadcast"] is True

    files = list(fake_slack.files.values())
    assert len(files) == 1 and files[0]["content"] == DIFF, "the full diff is attached as a file"
    assert files[0]["channel"] == CHANNEL and files[0]["thread_ts"] == thread_ts

    notify("awaiting_approval", _payload())  # the same checkpoint notified again (a re-run node): no repost
    assert flush(10)
    assert len(fake_slack.calls_to("chat.postMessage", ok_only=True)) == 5


@pytest.mark.fast
def test_429_then_500_is_retried_and_the_caller_never_waits(tmp_path, fake_slack, slack_env):
    fake_slack.fail("chat.postMessage", 429, retry_after=2)
    fake_slack.fail("chat.postMessage", 500)
    cfg = _config(tmp_path, fake_slack)
    t0 = time.monotonic()
    SlackNotifier(cfg)("awaiting_approval", _payload("run-retry"))
    returned_after = time.monotonic() - t0
    assert flush(20)
    attempts = fake_slack.calls_to("chat.postMessage")
    assert [a["status"] for a in attempts] == [429, 500, 200]
    assert attempts[1]["t"] - attempts[0]["t"] >= 2.0, "Retry-After was not honoured"
    assert returned_after < 0.5 < attempts[2]["t"] - attempts[0]["t"], (
        f"notify took {returned_after:.2f}s: the run waited on Slack"
    )


@pytest.mark.fast
def test_slack_down_is_bounded_and_recorded_for_the_report(tmp_path, fake_slack, slack_env):
    """Through envqa.core.notify (the run's dispatcher): handed over at once, then recorded as failed in the store
    rows the report's `notifications` lists."""
    from envqa.core.notify import notify
    from envqa.store.db import Store

    for _ in range(20):
        fake_slack.fail("chat.postMessage", 503)
    cfg = _config(tmp_path, fake_slack, send_budget_sec=2.0)
    cfg.home.mkdir(parents=True)
    store = Store(cfg.db_path)
    t0 = time.monotonic()
    notify(cfg, "awaiting_approval", _payload("run-down"), store=store, key="prop-1")
    assert time.monotonic() - t0 < 1.0, "the run waited on a failing Slack"
    assert flush(20)
    took = time.monotonic() - t0
    assert took < 6, f"a failing Slack held the outbox {took:.1f}s (budget 2s)"
    rows = {(r["kind"], r["dedupe_key"]): r for r in store.notifications_for_run("run-down")}
    assert rows[("awaiting_approval", "prop-1")]["status"] == "sent"  # handed to the notifiers
    failed = rows[("awaiting_approval", "slack:prop-1")]
    assert failed["status"] == "failed" and "503" in failed["detail"], failed
    assert BOT_TOKEN not in failed["detail"]
    assert len(fake_slack.calls_to("chat.postMessage")) >= 2, "a 5xx is retried at least once"


@pytest.mark.fast
def test_flush_deadline_records_what_is_still_queued(tmp_path, fake_slack, slack_env):
    fake_slack.fail("chat.postMessage", 429, retry_after=4)  # the first message sits in its Retry-After
    failures = []
    cfg = _config(tmp_path, fake_slack)
    notifier = SlackNotifier(cfg, lambda c, run_id, kind, payload, error: failures.append((run_id, kind, error)))
    notifier("awaiting_approval", _payload("run-slow"))
    notifier("run_finished", {"run_id": "run-slow", "env_name": "x", "version": "c" * 64, "verdict": "findings"})
    t0 = time.monotonic()
    assert flush(1.0) is False
    assert time.monotonic() - t0 < 2.5
    assert [(r, k) for r, k, _ in failures] == [("run-slow", "run_finished")]
    assert "not sent within 1s" in failures[0][2]
    assert flush(20)  # the message in flight still goes out after its Retry-After
    assert [a["status"] for a in fake_slack.calls_to("chat.postMessage")] == [429, 200]
    assert slack_notifier.OUTBOX._pending == 0


@pytest.mark.fast
def test_runs_without_a_checkpoint_post_only_the_outcomes_notify_names(tmp_path, fake_slack, slack_env):
    cfg = _config(tmp_path, fake_slack, notify=["findings", "incomplete"])
    notify = SlackNotifier(cfg)
    base = {"env_name": "weak-verifier", "version": "d" * 64}
    notify("run_finished", {**base, "run_id": "run-clean", "verdict": "clean"})
    notify("adopted", {**base, "run_id": "run-clean", "iteration": 1})  # no thread: nothing to follow up
    notify(
        "run_finished",
        {**base, "run_id": "run-findings", "verdict": "findings", "findings": [{"rule": "verifier-accepts-mutant"}]},
    )
    notify("run_incomplete", {**base, "run_id": "run-infra", "verdict": "incomplete", "stop_reason": "docker down"})
    notify("awaiting_approval", _payload("run-quiet"))  # "approval" not in notify: no message
    assert flush(20)
    texts = [c["args"]["text"] for c in fake_slack.calls_to("chat.postMessage", ok_only=True)]
    assert len(texts) == 2, texts
    assert "run-findings" in texts[0] and "*findings*" in texts[0] and "verifier-accepts-mutant" in texts[0]
    assert "run-infra" in texts[1] and "could not finish: docker down" in texts[1]
    assert fake_slack.files == {}


def test_a_run_that_cannot_finish_still_says_so_in_slack(slack_home, fake_slack, tmp_path, base_image, redis_server):
    """`[slack] notify = [..., "incomplete"]` covers a run that ends on an infrastructure error (exit 3), not
    only one that reaches its report: here a Redis queue that no worker serves, past --stall-timeout."""
    import json
    import subprocess

    from qa_testkit import EXAMPLES, QA

    cwd, env = slack_home
    server = redis_server(tmp_path / "redis")
    try:
        env["REDIS_URL"] = server.url
        proc = subprocess.run(
            [QA, "run", str(EXAMPLES / "clean-wordfreq"), "--json", "--oracle-runs", "1", "--stall-timeout", "3"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.cleanup()
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["exit_code"] == 3
    [text] = [c["args"]["text"] for c in fake_slack.calls_to("chat.postMessage", ok_only=True)]
    assert "could not finish" in text and "queue 'sandbox'" in text, text
