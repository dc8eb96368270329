"""Whole trials on the real engine: what the agent can see, how trials end, and that containers always go."""

from __future__ import annotations

import json
import uuid

from envqa.agents.base import AgentContext, AgentRun
from envqa.agents.trial import run_trial
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from tests.foundation.conftest import containers_with


class LookAroundAgent:
    """Records what an agent can see; it never solves anything."""

    name = "look-around"

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def run(self, ctx: AgentContext) -> AgentRun:
        for path in ("/tests", "/solution", "/logs/verifier"):
            res = ctx.sandbox.exec(["bash", "-c", f"ls -A {path} 2>&1; echo exit=$?"], timeout=30)
            self.seen[path] = res.stdout
        found = ctx.sandbox.exec(
            ["bash", "-c", "find / -xdev \\( -name test.sh -o -name solve.sh \\) 2>/dev/null"], timeout=60
        )
        self.seen["find"] = found.stdout
        return AgentRun(exit_code=0, steps=1)


class CrashingAgent:
    name = "crashing"

    def run(self, ctx: AgentContext) -> AgentRun:
        ctx.sandbox.exec(["touch", "/tmp/was-here"], timeout=30)
        raise RuntimeError("agent bug: boom")


def _trial(env_root, agent_name, qa_config, docker_backend, agent=None):
    env = load_environment(env_root)
    run_id = f"t-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent=agent_name)
    result = run_trial(spec, env, docker_backend, qa_config, RunLayout(qa_config.runs_dir, run_id), agent=agent)
    return result, run_id


def test_agent_phase_sees_no_tests_and_no_solution(make_env, qa_config, docker_backend, docker_client):
    agent = LookAroundAgent()
    result, run_id = _trial(make_env(), "look-around", qa_config, docker_backend, agent)
    assert "No such file or directory" in agent.seen["/tests"] and "exit=2" in agent.seen["/tests"]
    assert "No such file or directory" in agent.seen["/solution"] and "exit=2" in agent.seen["/solution"]
    assert agent.seen["/logs/verifier"].strip() == "exit=0"  # exists, empty
    assert agent.seen["find"].strip() == ""
    # ...and the verifier did run afterwards, with its tests, and scored the (empty) work.
    assert result.outcome == Outcome.FAIL and result.reward == 0.0
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_success_path_removes_container_and_writes_artifacts(make_env, qa_config, docker_backend, docker_client):
    result, run_id = _trial(make_env(), "oracle", qa_config, docker_backend)
    assert result.outcome == Outcome.PASS and result.reward == 1.0
    trial_dir = qa_config.runs_dir / run_id / result.trial_id
    stored = json.loads((trial_dir / "result.json").read_text())
    assert stored["trial_id"] == result.trial_id and stored["outcome"] == "pass"
    assert (trial_dir / "verifier" / "reward.txt").read_text().strip() == "1"
    assert (trial_dir / "verifier" / "test-stdout.txt").exists()
    assert (trial_dir / "agent" / "oracle.txt").exists()
    phases = [t.phase for t in result.timings]
    assert phases == ["build", "start", "agent", "verifier"]
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_exception_inside_the_agent_is_infra_and_removes_container(make_env, qa_config, docker_backend, docker_client):
    result, run_id = _trial(make_env(), "crashing", qa_config, docker_backend, CrashingAgent())
    assert result.outcome == Outcome.INFRA
    assert result.error_class == "agent_error"
    assert "agent bug: boom" in result.error_message
    assert (qa_config.runs_dir / run_id / result.trial_id / "result.json").exists()
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_hanging_solve_sh_is_killed_with_its_children(make_env, qa_config, docker_backend, docker_client):
    root = make_env(solve="sleep 1000 & sleep 1001 &\nsleep 1002\n", agent_timeout=2)
    seen_ps = {}

    def keep(sandbox, result):
        seen_ps["ps"] = sandbox.exec(["ps", "-eo", "args"], timeout=30).stdout

    env = load_environment(root)
    run_id = f"t-{uuid.uuid4().hex[:8]}"
    spec = TrialSpec(run_id=run_id, env_version=env.version, agent="oracle")
    result = run_trial(spec, env, docker_backend, qa_config, RunLayout(qa_config.runs_dir, run_id), keep_sandbox=keep)
    assert result.agent_timed_out
    assert result.outcome == Outcome.FAIL  # the verifier still ran and scored the unfinished work
    assert not any(f"sleep {n}" in seen_ps["ps"] for n in (1000, 1001, 1002)), seen_ps["ps"]
    assert result.timing("agent") < 15
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_solve_sh_printing_a_gigabyte_does_not_fill_disk_or_memory(make_env, qa_config, docker_backend, docker_client):
    root = make_env(solve="head -c 1000000000 /dev/zero | tr '\\\\0' x\necho ok > /app/out.txt\n")
    result, run_id = _trial(root, "oracle", qa_config, docker_backend)
    trial_dir = qa_config.runs_dir / run_id / result.trial_id
    size = sum(p.stat().st_size for p in trial_dir.rglob("*") if p.is_file())
    assert size < 4 * 1024 * 1024, f"trial artifacts hold {size} bytes"
    exec_log = (trial_dir / "agent" / "exec.txt").read_text()
    assert "truncated=True" in exec_log
    assert result.outcome in (Outcome.PASS, Outcome.FAIL)
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []


def test_verifier_that_writes_nothing_is_a_verifier_error(make_env, qa_config, docker_backend):
    root = make_env(test_sh="#!/bin/bash\necho 'I checked nothing'\n")
    result, _ = _trial(root, "oracle", qa_config, docker_backend)
    assert result.outcome == Outcome.INFRA and result.reward is None
    assert result.error_class == "verifier_error"
    assert "wrote no reward" in result.error_message


def test_verifier_with_nested_reward_json_is_a_verifier_error(make_env, qa_config, docker_backend):
    root = make_env(
        test_sh='#!/bin/bash\nmkdir -p /logs/verifier\necho \'{"reward": {"x": 1}}\' > /logs/verifier/reward.json\n'
    )
    result, _ = _trial(root, "oracle", qa_config, docker_backend)
    assert (result.outcome, result.error_class) == (Outcome.INFRA, "verifier_error")


def test_reward_json_named_scores(make_env, qa_config, docker_backend):
    root = make_env(
        test_sh="#!/bin/bash\nmkdir -p /logs/verifier\n"
        'echo \'{"correct": 1, "style": 1}\' > /logs/verifier/reward.json\n'
    )
    result, _ = _trial(root, "oracle", qa_config, docker_backend)
    assert result.outcome == Outcome.PASS and result.rewards == {"correct": 1.0, "style": 1.0}


def test_verifier_timeout(make_env, qa_config, docker_backend, docker_client):
    root = make_env(test_sh="#!/bin/bash\nsleep 1000\n")
    (root / "task.toml").write_text(
        (root / "task.toml").read_text().replace("[verifier]\ntimeout_sec = 30.0", "[verifier]\ntimeout_sec = 1.5")
    )
    result, run_id = _trial(root, "nop", qa_config, docker_backend)
    assert (result.outcome, result.error_class) == (Outcome.INFRA, "verifier_timeout")
    assert containers_with(docker_client, **{"envqa.run": run_id}) == []
