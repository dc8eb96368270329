"""Approve and reject from Slack, end to end: `qa run --approval wait` posts the proposal to the fake
Slack (through 429 and 500), signed clicks go to a real `qa serve` process, and the run resumes to its
end. Forged, stale, replayed and unauthorised clicks change nothing. No token or secret leaks anywhere."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path

import pytest

from envqa.store.db import Store
from qa_testkit import copy_example, run_qa, wait_for

from .conftest import APPROVER, BOT_TOKEN, GROUP_MEMBER, OUTSIDER, SIGNING_SECRET, click_body, sign

pytestmark = pytest.mark.usefixtures("base_image")


def _pending_run(tmp_path, slack_home, fake_slack) -> tuple[str, dict, list[str]]:
    """`qa run examples/reward-tamper --approval wait`: exits 4 with a proposal posted to Slack."""
    cwd, env = slack_home
    env_dir = copy_example("reward-tamper", tmp_path)
    proc = run_qa(["run", str(env_dir), "--approval", "wait", "--json", "--oracle-runs", "1"], env, cwd=cwd)
    assert proc.returncode == 4, f"expected exit 4 (awaiting approval), got {proc.returncode}\n{proc.stderr[-3000:]}"
    report = json.loads(proc.stdout)
    assert report["verdict"] == "awaiting_approval"
    return report["run_id"], report, [proc.stdout, proc.stderr]


def _root_message(fake_slack) -> dict:
    posts = [c for c in fake_slack.calls_to("chat.postMessage", ok_only=True) if c["args"].get("blocks")]
    assert posts, f"no approval message was posted: {fake_slack.calls}"
    return posts[0]


def _store(env: dict) -> Store:
    return Store(Path(env["QA_HOME"]) / "envqa.db")


def _ephemerals(fake_slack) -> list[str]:
    return [c["args"].get("text", "") for c in fake_slack.calls if c["method"] == "response_url"]


def _assert_no_secret(texts: list[str], env: dict, tmp_path: Path) -> None:
    """The token and the signing secret appear in no output, log or file under QA_HOME (nor the work dir)."""
    needles = [BOT_TOKEN.encode(), SIGNING_SECRET.encode()]
    for text in texts:
        assert not any(n in text.encode() for n in needles), "a Slack secret was printed"
    scanned = 0
    for root in (Path(env["QA_HOME"]), tmp_path):
        for path in root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                scanned += 1
                assert not any(n in data for n in needles), f"a Slack secret leaked into {path}"
    assert scanned > 10, "nothing was scanned: QA_HOME is not where the run wrote"


def _wait_finished(store: Store, run_id: str, timeout: float = 420) -> dict:
    def done():
        row = store.get_run(run_id)
        return row if row and row["status"] == "finished" else None

    return wait_for(done, timeout, f"run {run_id} to finish after the Slack decision", every=0.5)


def test_approve_from_slack_after_slack_429_and_500(tmp_path, slack_home, fake_slack, serve):
    cwd, env = slack_home
    fake_slack.fail("chat.postMessage", 429, retry_after=2)
    fake_slack.fail("chat.postMessage", 500)
    run_id, report, outputs = _pending_run(tmp_path, slack_home, fake_slack)
    store = _store(env)

    # Slack answered 429 then 500: the message still got posted, and the run did not wait for it.
    attempts = fake_slack.calls_to("chat.postMessage")
    assert [a["status"] for a in attempts][:3] == [429, 500, 200]
    root = _root_message(fake_slack)
    sent = [n for n in store.notifications_for_run(run_id) if n["kind"] == "awaiting_approval"]
    assert sent and sent[0]["status"] == "sent"
    handed_back = datetime.fromisoformat(sent[0]["created_at"]).timestamp()
    assert handed_back < root["t"] - 1.5, "the run waited for Slack's retries before going on"
    proposal = report["awaiting_approval"]["proposal"]
    proposal_id = proposal["proposal_id"]
    shown = json.dumps(root["args"]["blocks"], ensure_ascii=False)
    assert "Revision proposed for reward-tamper" in shown and "gate passed" in shown
    labels = {f["rule"]: f["label"] for f in report["findings"]}
    assert proposal["addresses"] and "exploit-reward-tamper" in labels
    for rule in proposal["addresses"]:
        assert f"`{rule}` [{labels[rule]}]" in shown, f"{rule} is not in the message with its label"
    value = next(b for b in root["args"]["blocks"] if b["type"] == "actions")["elements"][0]["value"]
    assert json.loads(value) == {"run_id": run_id, "proposal_id": proposal_id}
    assert any(f["content"] == report["awaiting_approval"]["proposal"]["diff"] for f in fake_slack.files.values())

    srv = serve()
    blocks, ts = root["args"]["blocks"], root["ts"]
    body = click_body(run_id, proposal_id, APPROVER, "approve", fake_slack, message_ts=ts, blocks=blocks)

    # Forged and stale requests: 401, nothing recorded, nothing posted.
    assert srv.post(body, sign(body, secret="not-the-secret"))[0] == 401
    assert srv.post(body, sign(body, timestamp=int(time.time()) - 6 * 60))[0] == 401
    assert srv.post(body, {})[0] == 401
    # Someone outside [slack] approvers: refused, ephemerally.
    outsider = click_body(run_id, proposal_id, OUTSIDER, "approve", fake_slack, message_ts=ts, blocks=blocks)
    assert srv.post(outsider, sign(outsider))[0] == 200
    wait_for(
        lambda: any("not one of this envqa's approvers" in t for t in _ephemerals(fake_slack)),
        30,
        "the ephemeral refusal to the outsider",
    )
    assert store.approvals_for_run(run_id) == []
    assert store.get_run(run_id)["status"] == "awaiting_approval"
    assert fake_slack.calls_to("chat.update") == []

    # The approver's click: acknowledged within 3 s, recorded with the Slack user id, the run resumes to its end.
    headers = sign(body)
    status, took = srv.post(body, headers)
    assert status == 200 and took < 3.0, f"ack took {took:.2f}s"
    final = _wait_finished(store, run_id)
    assert final["verdict"] == "clean", final["verdict"]
    decisions = store.approvals_for_run(run_id)
    assert [(d["action"], d["approver"]) for d in decisions] == [("approve", f"slack:{APPROVER}")]
    final_report = json.loads(final["report_json"])
    assert len(final_report["versions"]) == 2
    assert final_report["versions"][1]["approval"]["approver"] == f"slack:{APPROVER}"
    updates = fake_slack.calls_to("chat.update", ok_only=True)
    assert len(updates) == 1 and updates[0]["args"]["ts"] == ts
    assert f"Approved* by <@{APPROVER}>" in json.dumps(updates[0]["args"]["blocks"])
    assert not any(
        b["type"] == "actions" and any("action_id" in e and not e.get("url") for e in b["elements"])
        for b in updates[0]["args"]["blocks"]
    ), "the buttons stay after the decision"
    wait_for(
        lambda: any(
            "finished: *clean*" in c["args"].get("text", "")
            for c in fake_slack.calls_to("chat.postMessage", ok_only=True)
        ),
        30,
        "the run_finished thread reply",
    )
    thread = [c["args"] for c in fake_slack.calls_to("chat.postMessage", ok_only=True) if c["args"].get("thread_ts")]
    assert thread and all(t["thread_ts"] == ts for t in thread)
    assert any(t["text"].startswith("Adopted") for t in thread)

    # Slack retries the same request (and a double click): idempotent, "already approved by X".
    status, _ = srv.post(body, headers)
    assert status == 200
    wait_for(
        lambda: any(f"Already approved by <@{APPROVER}>" in t for t in _ephemerals(fake_slack)),
        30,
        "the 'already approved' answer to the replay",
    )
    assert len(store.approvals_for_run(run_id)) == 1 and len(fake_slack.calls_to("chat.update")) == 1
    assert store.get_run(run_id)["status"] == "finished"

    srv.stop()
    _assert_no_secret(
        outputs + [srv.stdout_path.read_text(), srv.stderr_path.read_text(), json.dumps(fake_slack.calls)],
        env,
        tmp_path,
    )


def test_reject_from_slack_by_a_group_member_continues_on_rq_workers(
    tmp_path, slack_home, fake_slack, serve, redis_server
):
    """With REDIS_URL, `qa serve` only enqueues the continuation; an outside worker finishes the run."""
    from redis import Redis
    from rq.job import Job

    from envqa.scheduler.embedded import WorkerPool

    cwd, env = slack_home
    run_id, report, outputs = _pending_run(tmp_path, slack_home, fake_slack)
    store = _store(env)
    root = _root_message(fake_slack)
    proposal_id = report["awaiting_approval"]["proposal"]["proposal_id"]
    redis = redis_server(tmp_path / "redis")
    # the worker's environment carries the token (it posts the thread replies), never the signing secret
    pool = WorkerPool(
        redis.url,
        1,
        "*",
        env={"QA_HOME": env["QA_HOME"], "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": ""},
        log_dir=tmp_path / "workers",
    ).start()
    try:
        env["REDIS_URL"] = redis.url
        srv = serve()
        body = click_body(
            run_id,
            proposal_id,
            GROUP_MEMBER,
            "reject",
            fake_slack,
            message_ts=root["ts"],
            blocks=root["args"]["blocks"],
        )
        status, took = srv.post(body, sign(body))
        assert status == 200 and took < 3.0
        final = _wait_finished(store, run_id)
        final_report = json.loads(final["report_json"])
        assert final["verdict"] == "findings" and len(final_report["versions"]) == 1
        assert final_report["stop_reason"].startswith(f"rejected by slack:{GROUP_MEMBER}")
        assert [(d["action"], d["approver"]) for d in store.approvals_for_run(run_id)] == [
            ("reject", f"slack:{GROUP_MEMBER}")
        ]
        job = Job.fetch(f"control-{run_id}-continue-{proposal_id}", connection=Redis.from_url(redis.url))
        assert job.origin == "control" and job.worker_name, "the continuation did not run on the worker"
        update = wait_for(lambda: fake_slack.calls_to("chat.update", ok_only=True), 30, "the message update")
        assert f"Rejected* by <@{GROUP_MEMBER}>" in json.dumps(update[0]["args"]["blocks"])
        wait_for(
            lambda: any(
                "finished: *findings*" in c["args"].get("text", "") and c["args"].get("thread_ts") == root["ts"]
                for c in fake_slack.calls_to("chat.postMessage", ok_only=True)
            ),
            30,
            "the run_finished thread reply from the worker",
        )
        srv.stop()
    finally:
        pool.stop()
        redis.cleanup()
    logs = [p.read_text(errors="replace") for p in (tmp_path / "workers").rglob("*") if p.is_file()]
    _assert_no_secret(outputs + logs + [srv.stdout_path.read_text(), srv.stderr_path.read_text()], env, tmp_path)
