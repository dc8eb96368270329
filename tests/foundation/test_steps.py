"""Multi-step trials on the real engine (agents/steps.py): steps in order in one container, min_reward
gating the rest, the trial reward per `multi_step_reward_strategy`, per-step rewards in the result."""

from __future__ import annotations

import json
import uuid

import pytest

from envqa.agents.base import AgentContext, AgentRun
from envqa.agents.oracle import OracleAgent
from envqa.agents.trial import run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from qa_testkit import EXAMPLES
from tests.foundation.conftest import containers_with


class PeekingOracle(OracleAgent):
    """The oracle, recording first what each step's agent can see of the grading harness."""

    name = "oracle"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def run(self, ctx: AgentContext) -> AgentRun:
        res = ctx.sandbox.exec(["bash", "-c", "ls -A /tests /solution /logs/verifier 2>&1; true"], timeout=30)
        self.seen.append(res.stdout)
        return super().run(ctx)


def _trial(root, qa_config, docker_backend, agent_name="oracle", agent=None):
    env = load_environment(root)
    run_id = f"t-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent=agent_name)
    return run_trial(spec, env, docker_backend, qa_config, RunLayout(qa_config.runs_dir, run_id), agent=agent), run_id


def test_two_step_example_oracle_passes_both_steps(qa_config, docker_backend, docker_client):
    result, run_id = _trial(EXAMPLES / "clean-two-step", qa_config, docker_backend)
    assert result.outcome == Outcome.PASS and result.reward == 1.0, result.error_message
    assert [(s.name, s.outcome, s.reward) for s in result.step_results] == [
        ("create", Outcome.PASS, 1.0),
        ("extend", Outcome.PASS, 1.0),
    ]
    trial_dir = qa_config.runs_dir / run_id / result.trial_id
    for name in ("create", "extend"):  # each step's verifier output and oracle log kept apart
        assert (trial_dir / "steps" / name / "verifier" / "reward.txt").read_text().strip() == "1"
        assert (trial_dir / "steps" / name / "agent" / "oracle.txt").is_file()
    assert (trial_dir / "steps" / "extend" / "setup.txt").is_file()  # workdir/setup.sh ran before step 2
    stored = json.loads((trial_dir / "result.json").read_text())
    assert [s["reward"] for s in stored["step_results"]] == [1.0, 1.0]
    assert [t.phase for t in result.timings] == ["build", "start", "agent", "verifier", "agent", "verifier"]
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_two_step_example_nop_fails_and_is_gated(qa_config, docker_backend):
    result, _ = _trial(EXAMPLES / "clean-two-step", qa_config, docker_backend, agent_name="nop")
    assert result.outcome == Outcome.FAIL and result.reward == 0.0
    first, second = result.step_results
    assert first.reward == 0.0 and first.stopped and "min_reward" in first.stopped
    assert second.skipped and second.outcome is None and second.reward is None


GATED = """\
schema_version = "1.4"
multi_step_reward_strategy = "{strategy}"

[agent]
timeout_sec = 60.0

[verifier]
timeout_sec = 30.0

[environment]
memory_mb = 256
network_mode = "no-network"

[[steps]]
name = "a"

[[steps]]
name = "b"
min_reward = 0.5

[[steps]]
name = "c"
"""


def _gated_task(root, strategy: str):
    files = {
        "task.toml": GATED.format(strategy=strategy),
        "environment/Dockerfile": "FROM debian:bookworm\nWORKDIR /app\n",
        # a: passes with two reward keys; b: its test never passes (min_reward stops c); c: would pass
        "steps/a/instruction.md": "Write a.\n",
        "steps/a/solution/solve.sh": "#!/bin/bash\necho a > /app/a\n",
        "steps/a/tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\n"
        'echo \'{"reward": 1, "style": 0.5}\' > /logs/verifier/reward.json\n',
        "steps/b/instruction.md": "Write b.\n",
        "steps/b/solution/solve.sh": "#!/bin/bash\necho b > /app/b\n",
        "steps/b/tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 0 > /logs/verifier/reward.txt\n",
        "steps/c/instruction.md": "Write c.\n",
        "steps/c/solution/solve.sh": "#!/bin/bash\necho c > /app/c\n",
        "steps/c/tests/test.sh": "#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    "strategy,reward,rewards",
    [
        ("mean", 0.5, {"reward": 0.5, "style": 0.25}),  # per-key means over a and b; b lacks `style`: counts 0
        ("final", 0.0, {"reward": 0.0}),  # the last step that ran (b), verbatim; c was skipped
    ],
)
def test_min_reward_skips_the_rest_and_the_strategy_combines(
    tmp_path, qa_config, docker_backend, strategy, reward, rewards
):
    agent = PeekingOracle()
    result, _ = _trial(_gated_task(tmp_path / strategy, strategy), qa_config, docker_backend, agent=agent)
    assert [(s.name, s.reward, s.skipped) for s in result.step_results] == [
        ("a", 1.0, False),
        ("b", 0.0, False),
        ("c", None, True),
    ]
    assert result.step_results[1].stopped == "reward=0 below min_reward 0.5"
    assert result.reward == reward and result.rewards == rewards and result.outcome == Outcome.FAIL
    assert len(agent.seen) == 2  # c's agent never ran
    # Step b's agent saw nothing of step a's verifier: /tests, /solution removed, /logs/verifier emptied.
    assert "No such file or directory" in agent.seen[1] and "test.sh" not in agent.seen[1], agent.seen[1]
    assert "reward" not in agent.seen[1], agent.seen[1]


def test_qa_new_steps_oracle_passes_every_step_nop_fails(tmp_path, qa_config, docker_backend):
    from envqa.agents.generator import scaffold_task

    root = scaffold_task("multi", tmp_path / "multi", steps=2)
    oracle, _ = _trial(root, qa_config, docker_backend)
    assert oracle.outcome == Outcome.PASS and [s.reward for s in oracle.step_results] == [1.0, 1.0]
    nop, _ = _trial(root, qa_config, docker_backend, agent_name="nop")
    assert nop.outcome == Outcome.FAIL and nop.reward == 0.0 and [s.reward for s in nop.step_results] == [0.0, 0.0]


BROKEN = {  # step a's setup.sh fails (the task's own file: a fail), or its verifier writes no reward (infra)
    "setup": {"steps/a/workdir/setup.sh": "#!/bin/bash\necho cannot prepare >&2\nexit 3\n"},
    "verifier": {"steps/a/tests/test.sh": "#!/bin/bash\nexit 0\n"},
}


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_step_stops_the_rest(tmp_path, qa_config, docker_backend, broken):
    root = _gated_task(tmp_path / broken, "mean")
    for rel, text in BROKEN[broken].items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    result, _ = _trial(root, qa_config, docker_backend)
    a, b, c = result.step_results
    assert b.skipped and c.skipped and a.stopped
    if broken == "setup":  # the task is broken, not the machine: the oracle fails (qa reports oracle-fails)
        assert (
            a.outcome == Outcome.FAIL and "setup.sh exited 3" in a.error_message and "cannot prepare" in a.error_message
        )
        assert result.outcome == Outcome.FAIL and result.reward == 0.0 and result.error_class is None
    else:  # a verifier that says nothing usable is infra, never a pass or a fail
        assert a.outcome == Outcome.INFRA and a.error_class == "verifier_error"
        assert result.outcome == Outcome.INFRA and result.error_class == "verifier_error"
        assert result.error_message.startswith("step 'a': ")
