"""A multi-step trial's per-step rewards in report.html (issue 23), in a real headless Chromium."""

from __future__ import annotations

from envqa.app.report_html import render_report
from envqa.core.models import Outcome, StepResult, TrialResult
from envqa.graphs.loop_report import trial_objects
from qa_testkit import open_report


def test_trial_detail_shows_each_steps_reward_and_the_gate(tmp_path, page):
    steps = [
        StepResult(
            name="create",
            outcome=Outcome.FAIL,
            reward=0.0,
            rewards={"reward": 0.0},
            stopped="reward=0 below min_reward 1",
        ),
        StepResult(name="extend", skipped=True),
    ]
    trial = TrialResult(
        trial_id="nop-0-abc",
        run_id="r",
        env_version="v" * 64,
        agent="nop",
        outcome=Outcome.FAIL,
        reward=0.0,
        step_results=steps,
    )
    report = {
        "run_id": "r",
        "verdict": "clean",
        "environment": {"name": "two", "version": "v" * 64},
        "findings": [],
        "trials": trial_objects([trial]),
    }
    html = tmp_path / "report.html"
    html.write_text(render_report(report, tmp_path))
    open_report(page, html)
    row = page.locator("tr.trial-row[data-trial='nop-0-abc']")
    assert "0 [0 / –]" in row.inner_text()  # the trial's reward, then each step's (– skipped)
    row.locator("button.open").click()
    box = page.wait_for_selector("tr.trace-row[data-trial='nop-0-abc'] .steps-box", timeout=10000)
    text = box.inner_text()
    assert "create" in text and "reward 0" in text and "stopped the rest: reward=0 below min_reward 1" in text
    assert "extend" in text and "skipped" in text
    assert page.errors == []
