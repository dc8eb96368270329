"""Multi-step rewards without a container: the strategies' math (agents/steps.py `combine`), min_reward
gating, the per-step JSON shape of `qa run --json` and the HTML report, and old stored rows still reading."""

from __future__ import annotations

import json
import os

import pytest

from envqa.agents.steps import combine, min_reward_failure, step_environment
from envqa.app.report_html.data import build_view
from envqa.core.environment import load_environment
from envqa.core.models import Outcome, StepResult, TrialResult
from envqa.core.task_config import MultiStepRewardStrategy as Strategy
from envqa.graphs.loop_report import trial_objects
from qa_testkit import EXAMPLES, run_qa

pytestmark = pytest.mark.fast


def _step(name, score=None, skipped=False, **rewards):
    return StepResult(
        name=name,
        reward=score,
        skipped=skipped,
        outcome=None if skipped else Outcome.FAIL,
        rewards=rewards or ({"reward": score} if score is not None else {}),
    )


def test_mean_is_per_key_over_verified_steps_missing_keys_zero():
    steps = [_step("a", 1.0, reward=1.0, style=0.5), _step("b", 0.0), _step("c", skipped=True)]
    assert combine(steps, Strategy.MEAN) == (0.5, {"reward": 0.5, "style": 0.25})


def test_mean_without_a_reward_key_is_the_mean_of_the_means():
    steps = [_step("a", 0.75, correct=1.0, fast=0.5), _step("b", 0.25, correct=0.0, fast=0.5)]
    assert combine(steps, Strategy.MEAN) == (0.5, {"correct": 0.5, "fast": 0.5})


def test_final_is_the_last_step_that_ran_verbatim():
    steps = [_step("a", 1.0), _step("b", 0.25, reward=0.25, extra=1.0), _step("c", skipped=True)]
    assert combine(steps, Strategy.FINAL) == (0.25, {"reward": 0.25, "extra": 1.0})


def test_no_verified_step_gives_no_reward():
    steps = [StepResult(name="a", outcome=Outcome.FAIL, stopped="setup.sh failed"), _step("b", skipped=True)]
    assert combine(steps, Strategy.MEAN) == (None, {}) and combine(steps, Strategy.FINAL) == (None, {})


@pytest.mark.parametrize(
    "rewards,gate,stops",
    [
        ({"reward": 1.0}, None, None),
        ({"reward": 0.4}, 0.5, "reward=0.4 below min_reward 0.5"),
        ({"reward": 0.5}, 0.5, None),
        ({"reward": 1.0, "style": 0.2}, {"reward": 1.0, "style": 0.5}, "style=0.2 below min_reward 0.5"),
        ({"style": 1.0}, {"reward": 0.1}, "reward=-inf below min_reward 0.1"),  # a missing key counts as -inf
    ],
)
def test_min_reward_gate(rewards, gate, stops):
    assert min_reward_failure(rewards, gate) == stops


def test_step_environment_is_the_step_over_the_task():
    env = load_environment(EXAMPLES / "clean-two-step")
    config = env.config.steps[1]
    view = step_environment(env, env.steps[1], config)
    assert "delivery" in view.instruction
    assert [c.source.name for c in view.solution] == ["solution"] and view.solution[0].source.parent.name == "extend"
    assert [c.source.parent.name for c in view.tests] == ["extend"]  # no task-level tests/ in this example
    assert view.agent_timeout_sec == 120.0 and view.config.verifier.timeout_sec == 60.0


def _trial(steps=None) -> TrialResult:
    return TrialResult(
        trial_id="oracle-0-x",
        run_id="r",
        env_version="v",
        agent="oracle",
        outcome=Outcome.FAIL,
        reward=0.5,
        step_results=steps or [],
    )


def test_json_shape_of_the_per_step_rewards():
    steps = [
        _step("a", 1.0),
        StepResult(
            name="b", outcome=Outcome.FAIL, reward=0.0, rewards={"reward": 0.0}, stopped="reward=0 below min_reward 1"
        ),
        _step("c", skipped=True),
    ]
    obj = trial_objects([_trial(steps)])[0]
    assert obj["step_results"] == [
        {
            "name": "a",
            "outcome": "fail",
            "reward": 1.0,
            "rewards": {"reward": 1.0},
            "skipped": False,
            "stopped": None,
            "error_class": None,
        },
        {
            "name": "b",
            "outcome": "fail",
            "reward": 0.0,
            "rewards": {"reward": 0.0},
            "skipped": False,
            "stopped": "reward=0 below min_reward 1",
            "error_class": None,
        },
        {
            "name": "c",
            "outcome": None,
            "reward": None,
            "rewards": {},
            "skipped": True,
            "stopped": None,
            "error_class": None,
        },
    ]
    assert "step_results" not in trial_objects([_trial()])[0]  # a single-step trial's object is unchanged


def test_a_row_stored_before_steps_still_reads():
    old = _trial().model_dump(mode="json")
    del old["step_results"]
    assert TrialResult.model_validate(old).step_results == []


def test_html_view_takes_the_steps_from_the_stored_result(tmp_path):
    """A report written without step_results (an older qa) still shows them: the store's result has them."""
    t = _trial([_step("a", 1.0), _step("b", skipped=True)])
    report = {"run_id": "r", "trials": [{"trial_id": t.trial_id, "agent": "oracle", "outcome": "fail"}]}
    view, _ = build_view(report, tmp_path, {"results": {t.trial_id: t.model_dump(mode="json")}})
    assert [s["name"] for s in view["trials"][0]["step_results"]] == ["a", "b"]


def test_qa_new_steps_scaffolds_a_multi_step_schema_14_task(tmp_path):
    env = {**os.environ, "QA_HOME": str(tmp_path / "qa-home")}
    made = run_qa(["new", "multi", "--steps", "2", "--json"], env, cwd=tmp_path, timeout=120)
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["files"] == [
        "environment/Dockerfile",
        *[f"steps/step-{i}/{f}" for i in (1, 2) for f in ("instruction.md", "solution/solve.sh", "tests/test.sh")],
        "task.toml",
    ]
    task = load_environment(tmp_path / "multi")
    assert task.config.schema_version == "1.4" and [s.name for s in task.config.steps] == ["step-1", "step-2"]
    assert task.config.reward_strategy() == Strategy.MEAN and task.warnings == [] and task.not_yet_run() == []
    lint = run_qa(["lint", "multi", "--json"], env, cwd=tmp_path, timeout=120)
    report = json.loads(lint.stdout)
    assert report.pop("coverage")["summary"].startswith("nothing found by "), lint.stdout
    assert report == {"ok": True, "findings": []}, lint.stdout
