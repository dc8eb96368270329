"""The solver loop in a real Docker trial, driven through the real SDKs by the fake provider server."""

from __future__ import annotations

import json

from envqa.agents.solver import SolverAgent
from envqa.agents.trial import run_trial
from envqa.core.config import load_config
from envqa.core.environment import load_environment
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialSpec
from qa_testkit import EXAMPLES

from . import scripts
from .conftest import GOOD_KEY


def trial(tmp_path, docker_backend, model: str, solver: dict | None = None, index: int = 0):
    cfg = load_config(None, {"home": str(tmp_path / "home"), **{f"solver.{k}": v for k, v in (solver or {}).items()}})
    env = load_environment(EXAMPLES / "clean-wordfreq")
    spec = TrialSpec(run_id="r1", env_version=env.version, agent="solver", model=model, index=index, purpose="sweep")
    result = run_trial(
        spec, env, docker_backend, cfg, RunLayout(cfg.runs_dir, "r1"), agent=SolverAgent(model=model, config=cfg)
    )
    traj = json.loads((tmp_path / "home" / "runs" / "r1" / spec.trial_id / "agent" / "trajectory.json").read_text())
    return result, traj


def test_scripted_solution_earns_reward_1_and_a_complete_trajectory(
    tmp_path, docker_backend, fake_provider, provider_env
):
    # The model "says" the key in its first message: the trajectory must still not contain it.
    srv = fake_provider(
        {"models": {"good": {"turns": scripts.write_script_turns(scripts.WORDFREQ, say=f"my key is {GOOD_KEY}")}}}
    )
    provider_env(srv)
    result, traj = trial(tmp_path, docker_backend, "anthropic/good")
    assert result.outcome == Outcome.PASS and result.reward == 1.0
    assert traj["notes"] == "finished" and traj["final_metrics"]["total_prompt_tokens"] == 6300
    agent_steps = [s for s in traj["steps"] if s["source"] == "agent"]
    assert len(agent_steps) == 4
    check = agent_steps[2]["observation"]["results"][0]["content"]
    assert "2 a\n2 b\n1 c" in check  # the model really ran its script inside the container
    assert GOOD_KEY not in json.dumps(traj) and "[REDACTED]" in agent_steps[0]["message"]
    # What the model was sent back (unredacted) shows the container's environment holds no key.
    env_dump = next(r["last"] for r in srv.requests if "PATH=" in r["last"])
    assert GOOD_KEY not in env_dump and "API_KEY" not in env_dump


def test_command_timeout_truncation_and_step_limit(tmp_path, docker_backend, fake_provider, provider_env):
    srv = fake_provider(
        {
            "models": {
                "lim": {
                    "turns": [
                        {"tool_calls": [scripts.bash("sleep 30; echo never")]},
                        {"tool_calls": [scripts.bash("seq 1 200000")]},
                        {"text": "thinking without tools"},
                        {"tool_calls": [scripts.finish()]},
                    ]
                }
            }
        }
    )
    provider_env(srv)
    result, traj = trial(
        tmp_path, docker_backend, "openai/lim", {"command_timeout_sec": 1, "observation_chars": 600, "max_steps": 3}
    )
    obs = [s["observation"]["results"][0]["content"] for s in traj["steps"] if s.get("observation")]
    assert "timed out after 1 seconds" in obs[0] and "never" not in obs[0]
    assert "characters truncated" in obs[1] and len(obs[1]) < 900 and "200000" in obs[1]
    assert traj["notes"] == "max_steps"  # the finish turn was never reached
    assert "no tool call" in srv.requests[-1]["last"] or len(srv.requests) == 3
    assert result.outcome == Outcome.FAIL and result.agent_exit_code == 1


def test_rate_limit_mid_trial_is_infra_not_fail(tmp_path, docker_backend, fake_provider, provider_env):
    srv = fake_provider({"models": {"*": {"faults": [{"status": 429, "retry_after": 3, "times": -1}]}}})
    provider_env(srv)
    result, traj = trial(tmp_path, docker_backend, "anthropic/limited")
    assert result.outcome == Outcome.INFRA and result.error_class == "rate_limited"
    assert "retry after 3s" in result.error_message
    assert traj["notes"] == "provider_error:rate_limited"
