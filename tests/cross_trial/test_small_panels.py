"""Issue 53: rules sized to a 3-setup x 1-trial panel, their coverage lines, and no-pass tasks sorted by cause."""

from __future__ import annotations

import pytest

from envqa.core.imported import ImportedTrial, TestOutcome
from envqa.core.models import Outcome
from envqa.probes.cross_trial.probe import TaskTrials, cross_trial_findings
from envqa.probes.cross_trial.report import task_triage

pytestmark = pytest.mark.fast
SETUPS = [("claude-code", "opus"), ("codex", "gpt-5"), ("terminus-2", "gemini")]


def _trial(i: int, agent: str, model: str, message: str, outcome: str = "fail", **kw) -> ImportedTrial:
    return ImportedTrial(
        source_format="harbor",
        path=f"/jobs/t{i}",
        trial_name=f"t{i}",
        task_name="report",
        agent=agent,
        model=model,
        outcome=Outcome(outcome),
        tests=[TestOutcome(name="test_out", status="failed" if outcome == "fail" else "passed", message=message)],
        **kw,
    )


def _triage(trials):
    task = TaskTrials(task="report", trials={t.trial_name: t for t in trials})
    return task_triage(task, (0.1, 0.3), findings=cross_trial_findings(task))


def test_a_verifier_error_in_every_setup_is_concluded_and_sorted_verifier_error():
    msg = "ModuleNotFoundError: No module named 'numpy'"
    t = _triage([_trial(i, a, m, msg) for i, (a, m) in enumerate(SETUPS)])
    assert [f["rule"] for f in t["findings"]] == ["verifier-errors-everywhere"]
    assert t["no_pass"]["kind"] == "verifier-error"


def test_varied_failures_are_hard_and_the_coverage_line_says_what_was_missing():
    trials = []
    for i, (a, m) in enumerate(SETUPS[:2]):  # two setups fail one check alone, each with its own value
        t = _trial(i, a, m, f"AssertionError: wrong value\nassert {i} == 9")
        t.tests.append(TestOutcome(name="test_shape", status="passed"))
        trials.append(t)
    t = _triage(trials)
    assert t["no_pass"]["kind"] == "hard"
    assert not [f for f in t["findings"] if f["severity"] != "info"]
    assert any("test-fails-alone: needs >=" in line and "had 2" in line for line in t["coverage"]), t["coverage"]


def test_a_failed_oracle_is_a_broken_oracle():
    trials = [_trial(i, a, m, f"assert {i} == 9") for i, (a, m) in enumerate(SETUPS)]
    trials.append(_trial(9, "oracle", None, "assert 1 == 9"))
    assert _triage(trials)["no_pass"]["kind"] == "broken-oracle"


def test_a_pass_is_not_a_no_pass_task():
    trials = [_trial(0, *SETUPS[0], ""), _trial(1, *SETUPS[1], "", outcome="pass")]
    assert _triage(trials)["no_pass"] is None
