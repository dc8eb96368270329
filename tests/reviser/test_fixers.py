"""Mechanical fixers on files alone: what each one changes, and when its precondition makes it decline."""

from __future__ import annotations

import subprocess

import pytest

from envqa.agents.fixers import fixable_rules, mechanical_fix
from envqa.core.models import Finding, Label, Severity
from tests.reviser.conftest import write_task

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def finding(rule: str, location: str | None = None, *evidence: str) -> Finding:
    return Finding(
        rule=rule,
        label=Label.SHORTCUT,
        severity=Severity.ERROR,
        message=rule,
        location=location,
        evidence=list(evidence),
    )


def run_test_sh(fixed, out_txt: str | None, planted_reward: bool, tmp_path) -> str:
    """Run the rewritten test.sh with /app and /logs mapped into a temp dir: the reward it leaves."""
    root = tmp_path / "fs"
    (root / "app").mkdir(parents=True, exist_ok=True)
    (root / "logs" / "verifier").mkdir(parents=True, exist_ok=True)
    if out_txt is not None:
        (root / "app" / "out.txt").write_text(out_txt)
    if planted_reward:
        (root / "logs" / "verifier" / "reward.txt").write_text("1\n")
    script = (
        (fixed / "tests" / "test.sh").read_text().replace("/logs/", f"{root}/logs/").replace("/app/", f"{root}/app/")
    )
    subprocess.run(["bash", "-c", script], check=True, capture_output=True, timeout=30)
    return (root / "logs" / "verifier" / "reward.txt").read_text().strip()


def test_the_reward_fixer_writes_the_reward_on_every_path_and_ignores_a_planted_one(tmp_path):
    only_on_pass = (
        '#!/bin/bash\nmkdir -p /logs/verifier\n[ "$(cat /app/out.txt)" = hello ] && '
        "echo 1 > /logs/verifier/reward.txt\nexit 0\n"
    )
    task = write_task(tmp_path / "task", tests__test_sh=only_on_pass)
    fix = mechanical_fix(
        task,
        [
            finding("reward-not-written-on-failure", "tests/test.sh:3"),
            finding("exploit-reward-tamper", "tests/test.sh"),
        ],
    )
    assert fix.addressed == ["reward-not-written-on-failure", "exploit-reward-tamper"] and not fix.needs_model
    assert run_test_sh(fix.fixed_dir, "hello", False, tmp_path / "a") == "1"
    assert run_test_sh(fix.fixed_dir, "wrong", True, tmp_path / "b") == "0"  # the planted 1 is cleared
    assert run_test_sh(fix.fixed_dir, None, True, tmp_path / "c") == "0"


def test_an_unconditional_reward_is_tied_to_the_swallowed_check(tmp_path):
    always = (
        "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n"
        '[ "$(cat /app/out.txt)" = hello ] && echo ok || echo wrong\necho 1 > /logs/verifier/reward.txt\n'
    )
    task = write_task(tmp_path / "task", tests__test_sh=always)
    fix = mechanical_fix(task, [finding("reward-written-unconditionally", "tests/test.sh:5"), finding("nop-passes")])
    assert set(fix.addressed) == {"reward-written-unconditionally", "nop-passes"}
    assert run_test_sh(fix.fixed_dir, "hello", False, tmp_path / "a") == "1"
    assert run_test_sh(fix.fixed_dir, "nope", False, tmp_path / "b") == "0"


def test_the_reward_fixer_declines_what_it_cannot_rewrite_safely(tmp_path):
    computed = '#!/bin/bash\nscore=$(python3 /tests/score.py)\necho "$score" > /logs/verifier/reward.txt\n'
    fix = mechanical_fix(
        write_task(tmp_path / "a", tests__test_sh=computed),
        [finding("reward-not-written-on-failure", "tests/test.sh:3")],
    )
    assert (
        fix.needs_model == ["reward-not-written-on-failure"]
        and "computed" in fix.declined["reward-not-written-on-failure"]
    )
    nothing_to_tie = "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"
    fix = mechanical_fix(
        write_task(tmp_path / "b", tests__test_sh=nothing_to_tie),
        [finding("reward-written-unconditionally", "tests/test.sh:3"), finding("nop-passes")],
    )
    assert fix.needs_model == ["nop-passes", "reward-written-unconditionally"] and not fix.addressed
    fix = mechanical_fix(write_task(tmp_path / "c"), [finding("nop-passes")])
    assert fix.needs_model == ["nop-passes"]


def test_the_leak_fixer_declines_a_leak_no_instruction_creates(tmp_path):
    fix = mechanical_fix(
        write_task(tmp_path / "t"),
        [
            finding(
                "solution-output-in-image",
                None,
                "oracle output /app/out.txt is byte-identical to image file /usr/share/x",
            )
        ],
    )
    assert (
        fix.needs_model == ["solution-output-in-image"] and "/usr/share/x" in fix.declined["solution-output-in-image"]
    )


def test_the_leak_fixer_moves_a_copied_file_the_verifier_reads_into_tests(tmp_path):
    task = write_task(
        tmp_path / "t",
        environment__Dockerfile="FROM debian:bookworm\nWORKDIR /app\nCOPY expected.txt /opt/expected.txt\n",
        tests__test_sh="#!/bin/bash\n"
        "cmp -s /opt/expected.txt /app/out.txt && echo 1 > /logs/verifier/reward.txt || "
        "echo 0 > /logs/verifier/reward.txt\n",
    )
    (task / "environment" / "expected.txt").write_text("hello")
    fix = mechanical_fix(task, [finding("test-literals-in-image", None, "'hello' found in /opt/expected.txt")])
    assert fix.addressed == ["test-literals-in-image"], fix.declined
    assert "COPY" not in (fix.fixed_dir / "environment" / "Dockerfile").read_text()
    assert (fix.fixed_dir / "tests" / "expected.txt").read_text() == "hello"
    assert "cmp -s /tests/expected.txt" in (fix.fixed_dir / "tests" / "test.sh").read_text()


def test_runtime_installs_move_into_the_image_unless_they_need_the_verifier_phase(tmp_path):
    sh = "#!/bin/bash\npip install pytest==8.3.3\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n"
    fix = mechanical_fix(write_task(tmp_path / "a", tests__test_sh=sh), [finding("verifier-installs-at-runtime")])
    assert fix.addressed == ["verifier-installs-at-runtime"]
    assert "pip install" not in (fix.fixed_dir / "tests" / "test.sh").read_text()
    assert (fix.fixed_dir / "environment" / "Dockerfile").read_text().endswith("RUN pip install pytest==8.3.3\n")
    sh = "#!/bin/bash\npip install -r /tests/requirements.txt\n"
    fix = mechanical_fix(write_task(tmp_path / "b", tests__test_sh=sh), [finding("verifier-installs-at-runtime")])
    assert fix.needs_model == ["verifier-installs-at-runtime"]


def test_every_rule_the_issue_names_has_a_fixer():
    named = {
        "dockerfile-copies-solution",
        "dockerfile-copies-tests",
        "reward-written-unconditionally",
        "reward-not-written-on-failure",
        "exploit-reward-tamper",
        "exploit-workspace-conftest",
        "exploit-verifier-helper",
        "verifier-runs-image-file",
        "exploit-leaked-answers",
        "solution-output-in-image",
        "test-literals-in-image",
        "verifier-installs-at-runtime",
    }
    assert named <= set(fixable_rules()), named - set(fixable_rules())
