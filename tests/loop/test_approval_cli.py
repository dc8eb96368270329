"""The loop on examples/reward-tamper with no API key: stop for approval (exit 4), then approve, reject or
edit from a separate `qa` process, and kill -9 during the adopted version's validation, then resume.

One run goes to the checkpoint (module fixture); each test continues its own copy of that QA_HOME, so the
three decisions start from the same waiting state without paying for the first version three times.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from qa_testkit import EXAMPLES, QA, run_qa, sigkill_when

from .conftest import FAST, popen_qa, qa_json, store_rows, tree_digest

RUN_ID = "loop-tamper"
# Only the probes that find this example's flaws, so each version is checked in seconds, not minutes.
PROBES = 'enabled = ["static", "exploits"]\nexploits = ["exploit-reward-tamper"]\n'


def _config_text() -> str:
    return FAST.replace("[probes]\n", "[probes]\n" + PROBES) + "[validate]\noracle_runs = 2\n"


@pytest.fixture(scope="module")
def waiting(tmp_path_factory, module_store, base_image):
    """A reward-tamper run stopped at its approval checkpoint: (QA_HOME template, the exit-4 report, env dir)."""
    import os

    base = tmp_path_factory.mktemp("loop-waiting")
    env_dir = base / "reward-tamper"
    shutil.copytree(EXAMPLES / "reward-tamper", env_dir)
    cwd = base / "cwd"
    cwd.mkdir()
    (cwd / "qa.toml").write_text(_config_text())
    env = module_store.env(dict(os.environ, QA_HOME=str(base / "qa-home")))
    env.pop("REDIS_URL", None)
    before = tree_digest(env_dir)
    report = qa_json(["run", str(env_dir), "--approval", "wait", "--run-id", RUN_ID], env, cwd, code=4)
    assert tree_digest(env_dir) == before  # the user's directory is never written
    return {"home": base / "qa-home", "report": report, "env_dir": env_dir, "cwd": cwd}


@pytest.fixture
def branch(waiting, tmp_path, module_store, monkeypatch):
    """This test's own copy of the waiting run's state (its QA_HOME and its store); returns (env, cwd)."""
    import os

    home = tmp_path / "qa-home"
    shutil.copytree(waiting["home"], home)
    env = module_store.branch(dict(os.environ, QA_HOME=str(home)), monkeypatch)
    env.pop("REDIS_URL", None)
    return env, waiting["cwd"]


def _gate_trials(env: dict) -> set[str]:
    return {r["trial_id"] for r in store_rows(env, "SELECT trial_id FROM trials WHERE purpose LIKE 'gate%'")}


def test_wait_mode_exits_4_with_the_gated_proposal(waiting):
    report = waiting["report"]
    assert report["verdict"] == "awaiting_approval" and report["schema_version"] >= 2
    rules = {f["rule"] for f in report["findings"]}
    assert {"exploit-reward-tamper", "reward-not-written-on-failure"} <= rules
    pending = report["awaiting_approval"]
    proposal = pending["proposal"]
    assert proposal["status"] == "gate_passed" and pending["gate"]["passed"] is True
    assert "exploit-reward-tamper" in proposal["addresses"]
    assert "tests/test.sh" in pending["diff"] and proposal["expected_effect"]
    assert pending["band"]["measured"] is False  # no solver models: nothing to measure, but it is said
    assert [v["version"] for v in report["versions"]] == [report["environment"]["version"]]
    assert report["stop_reason"] is None and report["iterations"] == 0


def test_approve_from_another_process_adopts_revalidates_and_ends_clean(waiting, branch):
    env, cwd = branch
    v1 = waiting["report"]["environment"]["version"]
    gated = _gate_trials(env)
    assert gated, "the gate ran its trials before the checkpoint"
    report = qa_json(["approve", RUN_ID], env, cwd, code=0)
    assert report["verdict"] == "clean" and report["decision"]["action"] == "approve"
    assert _gate_trials(env) == gated  # the gate had already passed: approving does not run it again
    first, second = report["versions"]
    assert (first["version"], second["parent"]) == (v1, v1) and second["version"] != v1
    assert second["approval"]["action"] == "approve" and second["approval"]["approver"].startswith("cli:")
    assert second["author"].startswith("fixer:") and "tests/test.sh" in second["patch"]
    assert {f["rule"] for f in first["findings"]} >= {"exploit-reward-tamper"}
    assert [f for f in second["findings"] if f["severity"] != "info"] == []
    revalidated = [t for t in second["trials"] if t["purpose"] == "validate"]
    assert sorted(t["agent"] for t in revalidated) == ["nop", "oracle", "oracle"]
    assert {t["outcome"] for t in revalidated if t["agent"] == "oracle"} == {"pass"}
    assert report["environment"]["version"] == second["version"] and report["iterations"] == 1
    assert report["stop_reason"].startswith("clean")
    [row] = store_rows(env, "SELECT * FROM approvals")
    assert (row["run_id"], row["action"]) == (RUN_ID, "approve")
    # a second decision on the same checkpoint changes nothing and says who decided first
    again = qa_json(["reject", RUN_ID, "--reason", "changed my mind"], env, cwd, code=0)
    assert again["decision"]["already_decided"] is True and again["decision"]["action"] == "approve"
    assert len(store_rows(env, "SELECT * FROM approvals")) == 1
    runs = qa_json(["runs"], env, cwd, code=0)["runs"]
    assert [(r["run_id"], r["status"], r["iteration"]) for r in runs] == [(RUN_ID, "finished", 1)]
    show = qa_json(["show", RUN_ID], env, cwd, code=0)
    assert [v["open_findings"] for v in show["versions"]][1] == [] and show["awaiting_approval"] is None
    # The same story in text, as the HTML report tells it: findings per version with evidence, the labels,
    # the gate and approval of the revision, and where the report is.
    text = run_qa(["show", RUN_ID], env, cwd=cwd)
    assert text.returncode == 0, text.stderr[-3000:]
    out = text.stdout
    assert "findings per version" in out and "exploit-reward-tamper" in out and "evidence:" in out, out
    assert "trial labels per version" in out and "shortcut" in out, out
    flat = " ".join(out.split())  # rich wraps long lines at the terminal's width (80 without one)
    assert f"version {second['version'][:12]}: fixer:" in flat and "gate: lint ok" in flat, out
    assert f"report: {Path(env['QA_HOME']).resolve()}/runs/{RUN_ID}/report.html" in out, out


def test_reject_ends_the_run_with_the_reason_and_one_version(waiting, branch):
    env, cwd = branch
    report = qa_json(["reject", RUN_ID, "--reason", "rewrites the verifier too much"], env, cwd, code=1)
    assert report["verdict"] == "findings" and len(report["versions"]) == 1
    assert "rejected" in report["stop_reason"] and "rewrites the verifier too much" in report["stop_reason"]
    assert [p["status"] for p in report["proposals"]] == ["rejected"]
    [row] = store_rows(env, "SELECT * FROM approvals")
    assert (row["action"], row["reason"]) == ("reject", "rewrites the verifier too much")
    status = qa_json(["status", RUN_ID], env, cwd, code=0)
    assert status["status"] == "finished" and "rejected" in status["stop_reason"] and status["node"] == "report"


def _hand_fix(env: dict, v1: str, tmp: Path) -> str:
    """A human's own fix of reward-tamper as a unified diff on the loaded version."""
    from envqa.store.versions import make_diff

    snapshot = Path(env["QA_HOME"]) / "envs" / v1
    mine = tmp / "mine"
    shutil.copytree(snapshot, mine)
    (mine / "tests" / "test.sh").write_text(
        "#!/bin/bash\n# Fixed by hand: only the verifier writes the reward, on every path.\n"
        "rm -rf /logs/verifier\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
        "python3 -m pytest -q /tests/test_fib.py -p no:cacheprovider && echo 1 > /logs/verifier/reward.txt\nexit 0\n"
    )
    return make_diff(snapshot, mine)


def test_edit_is_gated_again_then_approved(waiting, branch, tmp_path):
    env, cwd = branch
    v1 = waiting["report"]["environment"]["version"]
    bad = tmp_path / "bad.diff"
    bad.write_text("--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n")
    refused = run_qa(["approve", RUN_ID, "--edit", str(bad)], env, cwd=cwd, timeout=120)
    assert refused.returncode == 2 and "outside" in refused.stderr
    assert store_rows(env, "SELECT * FROM approvals") == []  # a refused edit records nothing
    patch = tmp_path / "mine.diff"
    patch.write_text(_hand_fix(env, v1, tmp_path))
    gated = qa_json(["approve", RUN_ID, "--edit", str(patch)], env, cwd, code=4)
    edited = gated["awaiting_approval"]["proposal"]
    assert edited["proposal_id"].endswith("-edit") and edited["author"].startswith("human:cli:")
    assert edited["status"] == "gate_passed" and "rm -rf /logs/verifier" in gated["awaiting_approval"]["diff"]
    report = qa_json(["approve", RUN_ID], env, cwd, code=0)
    assert report["verdict"] == "clean" and len(report["versions"]) == 2
    second = report["versions"][1]
    assert second["author"].startswith("human:cli:") and second["approval"]["action"] == "approve"
    assert "rm -rf /logs/verifier" in second["patch"]
    actions = [r["action"] for r in store_rows(env, "SELECT * FROM approvals ORDER BY decided_at")]
    assert actions == ["edit", "approve"]


def test_kill_9_during_the_adopted_versions_validation_then_resume_loses_and_repeats_nothing(waiting, branch):
    env, cwd = branch
    v1 = waiting["report"]["environment"]["version"]

    def v2_validation() -> list[dict]:
        return store_rows(
            env, "SELECT * FROM trials WHERE purpose='validate' AND env_version != ? AND status='done'", (v1,)
        )

    proc = popen_qa(["approve", RUN_ID, "--json"], env, cwd)
    sigkill_when(proc, v2_validation, 300, "a trial of the adopted version's validation to be recorded")
    before = {t["trial_id"]: t for t in v2_validation()}
    assert 1 <= len(before) < 3, f"kill landed too late to test resume: {len(before)} trials already recorded"
    report = qa_json(["run", "--resume", RUN_ID], env, cwd, code=0)
    assert report["verdict"] == "clean" and len(report["versions"]) == 2
    after = {t["trial_id"]: t for t in v2_validation()}
    assert len(after) == 3  # oracle x2 + nop, each exactly once
    for trial_id, row in before.items():  # recorded before the kill: not run again
        assert after[trial_id]["result_json"] == row["result_json"]
        assert after[trial_id]["created_at"] == row["created_at"]
    validate = [t for t in report["versions"][1]["trials"] if t["purpose"] == "validate"]
    assert sorted(t["trial_id"] for t in validate) == sorted(after)
    assert [r["action"] for r in store_rows(env, "SELECT * FROM approvals")] == ["approve"]
    adopted = store_rows(env, "SELECT status FROM proposals WHERE status='adopted'")
    assert len(adopted) == 1


def test_prompt_mode_shows_the_proposal_and_takes_the_answer_from_the_terminal(waiting, branch):
    """`--approval prompt` on resume: the diff and gate evidence are shown, the typed answer is recorded."""
    env, cwd = branch
    # An edit whose patch does not apply is refused at the prompt and asked again, never recorded (a
    # recorded one would fail the resumed run at every resume).
    bad = Path(cwd) / "bad.patch"
    bad.write_text("--- a/instruction.md\n+++ b/instruction.md\n@@ -1 +1 @@\n-no such line\n+nor this\n")
    proc = subprocess.run(
        [QA, "run", "--resume", RUN_ID, "--approval", "prompt", "--json"],
        env=env,
        cwd=cwd,
        input=f"x\ne\n{bad}\nr\nnot this release\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert (
        "approve / reject / edit?" in proc.stderr and "tests/test.sh" in proc.stderr and "gate: passed" in proc.stderr
    )
    assert "edit refused, nothing recorded" in proc.stderr, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["stop_reason"].startswith("rejected by cli:") and "not this release" in report["stop_reason"]
    [row] = store_rows(env, "SELECT * FROM approvals")
    assert (row["action"], row["reason"]) == ("reject", "not this release")
