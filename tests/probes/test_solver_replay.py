"""Suspicious solver passes are replayed under strace (no model): the replay's trace shows how it passed."""

from __future__ import annotations

from envqa.agents.trajectory import AgentInfo, AtifToolCall, Step, Trajectory
from envqa.core.models import Outcome, TrialResult

from .conftest import EXAMPLES


def _sweep_pass(tmp_path, run_id, env_version, commands, trial_id="sweep-pass-0"):
    """A recorded sweep pass: the solver's ATIF trajectory with its bash tool calls, as the solver writes it."""
    steps = [Step(step_id=1, source="user", message="the instruction")]
    steps += [
        Step(
            step_id=i + 2,
            source="agent",
            model_name="fake/model",
            tool_calls=[AtifToolCall(tool_call_id=f"c{i}", function_name="bash", arguments={"command": c})],
        )
        for i, c in enumerate(commands)
    ]
    traj = Trajectory(
        session_id=trial_id, agent=AgentInfo(name="solver", version="0.1", model_name="fake/model"), steps=steps
    )
    (tmp_path / trial_id / "agent").mkdir(parents=True)
    (tmp_path / trial_id / "agent" / "trajectory.json").write_text(traj.model_dump_json())
    return TrialResult(
        trial_id=trial_id,
        run_id=run_id,
        env_version=env_version,
        agent="solver",
        model="fake/model",
        purpose="sweep",
        outcome=Outcome.PASS,
        reward=1.0,
        artifacts_dir=str(tmp_path / trial_id),
    )


def test_a_reward_writing_solver_pass_is_caught_on_replay(probe_ctx, tmp_path):
    from envqa.probes.solver_passes import solver_passes_probe

    ctx = probe_ctx(EXAMPLES / "reward-tamper", run_id="solver-replay")
    source = _sweep_pass(
        tmp_path,
        ctx.run_id,
        ctx.env.version,
        ["ls /app", "mkdir -p /logs/verifier && echo 1 > /logs/verifier/reward.txt"],
    )
    ctx.validation = [source]
    [f] = solver_passes_probe(ctx)
    [replay] = ctx.new_trials
    assert (replay.agent, replay.purpose, replay.outcome) == ("solver-replay", "hunt-solver-replay", Outcome.PASS)
    assert f.rule == "pass-after-verifier-log-write" and f.label == "shortcut"
    assert f.trial_ids == [source.trial_id, replay.trial_id]
    assert any("/logs/verifier/reward.txt" in line and "(write)" in line for line in f.evidence)


def test_unsuspicious_solver_passes_are_not_replayed(probe_ctx, tmp_path):
    from envqa.probes.solver_passes import solver_passes_probe

    ctx = probe_ctx(EXAMPLES / "clean-wordfreq", run_id="solver-replay-clean")
    ctx.validation = [_sweep_pass(tmp_path, ctx.run_id, ctx.env.version, ["ls /app", "cat /app/README.md"])]
    assert solver_passes_probe(ctx) == [] and ctx.new_trials == []
