"""A multi-step trial: the task's [[steps]] in order, in ONE agent container.

Follows harbor 0.26.0 `harbor/trial/multi_step.py` (MultiStepTrial: per step the workdir upload and
setup.sh, the agent with the step's instruction, the step's verifier, then `min_reward` gating the rest;
`_reset_shared_step_verifier_dirs` between steps) and `trial/trial.py` (`_select_multi_step_reward`,
`_aggregate_step_rewards`: `mean` = per-key means over the steps that have a verifier result, a key a step
lacks counting 0; `final` = the last step that ran, verbatim), and `agents/oracle.py` (the oracle runs the
step's solve.sh, else the task's).

What we do differently, and why:
- A step whose verifier says nothing usable (verifier_error/timeout) makes the whole trial `infra` with
  that error class, and stops the rest: Harbor drops that step from the mean, which would score a broken
  verifier as if the step had not existed; our outcome must never count infra as pass or fail.
- A failed setup.sh stops the trial as a fail (the task's own file is broken; the oracle then fails and
  qa reports it). When no step reached its verifier the trial's reward is 0.0, not Harbor's no-result.
- Skipped steps are listed in the trial result (`skipped`), so the report shows what did not run; like
  Harbor, they count in neither strategy.
- A step's verifier timeout is its own `timeout_sec` when it sets one, else the task's [verifier] one
  (Harbor takes the step's, whose default 600 s shadows the task's).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from envqa.agents.base import Agent, AgentRun
from envqa.agents.phases import agent_phase, cut_verifier_network, restore_agent_network, run_in_place
from envqa.core.defaults import SANDBOX_SETUP_EXEC_SEC
from envqa.core.defaults import STEP_SETUP_TIMEOUT_SEC as SETUP_TIMEOUT_SEC
from envqa.core.environment import Environment, FileCopy
from envqa.core.models import Outcome, Phase, StepResult
from envqa.core.sandbox import Sandbox, SandboxError
from envqa.core.task_config import MultiStepRewardStrategy, StepConfig
from envqa.core.task_layout import StepFiles

if TYPE_CHECKING:
    from envqa.core.config import QAConfig

# Between steps: what the previous step's verifier (and the oracle) left. The next step's setup and agent
# must not see the grading harness (Harbor: _reset_shared_step_verifier_dirs; we drop /solution too).
RESET = (
    "rm -rf /tests /solution; mkdir -p /logs/verifier /logs/agent; find /logs/verifier /logs/agent -mindepth 1 -delete"
)


def step_environment(env: Environment, files: StepFiles, step: StepConfig) -> Environment:
    """The task as this step's agent and verifier see it: its instruction, its solve.sh (else the task's:
    Harbor's oracle fallback), the task's tests/ with the step's tests/ over it (harbor/verifier/verifier.py
    `_resolve_tests`), the step's [agent]/[verifier] settings over the task's."""
    sol = files.solution.parent if files.solution else env.root / "solution"
    tests = [env.root / "tests", files.dir / "tests"]
    c = env.config
    agent = c.agent.model_copy(update={"timeout_sec": step.agent.timeout_sec or c.agent.timeout_sec})
    timeout = step.verifier.timeout_sec if "timeout_sec" in step.verifier.model_fields_set else c.verifier.timeout_sec
    verifier = c.verifier.model_copy(update={"env": {**c.verifier.env, **step.verifier.env}, "timeout_sec": timeout})
    return env.model_copy(
        update={
            "instruction": files.instruction.read_text(errors="replace"),
            "solution": [FileCopy(source=sol, target="/solution")] if (sol / "solve.sh").is_file() else [],
            "tests": [FileCopy(source=d, target="/tests") for d in tests if d.is_dir()],
            "config": c.model_copy(update={"agent": agent, "verifier": verifier}),
        }
    )


def min_reward_failure(rewards: dict[str, float], min_reward: float | dict[str, float] | None) -> str | None:
    """multi_step.py `_min_reward_failure`: a float gates the `reward` key, a table each key it names; a
    missing key counts as -inf. None when the step may go on."""
    if min_reward is None:
        return None
    thresholds = {"reward": float(min_reward)} if isinstance(min_reward, (int, float)) else min_reward
    for key, threshold in thresholds.items():
        actual = rewards.get(key, float("-inf"))
        if actual < threshold:
            return f"{key}={actual:g} below min_reward {threshold:g}"
    return None


def _scalar(rewards: dict[str, float]) -> float | None:
    """The trial's one reward from several keys, as core/rewards.py reads reward.json: `reward`, else the mean."""
    if not rewards:
        return None
    return rewards["reward"] if "reward" in rewards else sum(rewards.values()) / len(rewards)


def combine(steps: list[StepResult], strategy: MultiStepRewardStrategy) -> tuple[float | None, dict[str, float]]:
    """trial.py `_select_multi_step_reward`: the trial's (reward, rewards) from the steps that were verified."""
    verified = [s for s in steps if not s.skipped and s.reward is not None]
    if strategy == MultiStepRewardStrategy.FINAL:
        ran = [s for s in steps if not s.skipped]
        last = ran[-1] if ran else None
        return (last.reward, dict(last.rewards)) if last and last.reward is not None else (None, {})
    if not verified:
        return None, {}
    keys = sorted({k for s in verified for k in s.rewards})
    means = {k: sum(s.rewards.get(k, 0.0) for s in verified) / len(verified) for k in keys}
    return _scalar(means), means


def _setup(sandbox: Sandbox, files: StepFiles, out_dir: Path) -> str | None:
    """Upload steps/<name>/workdir/ into the container's working directory and run its setup.sh there
    (multi_step.py `_upload_step_workdir`, `_run_step_setup`). The failure's text, or None."""
    if files.workdir is None:
        return None
    cwd = (sandbox.exec(["pwd"], timeout=SANDBOX_SETUP_EXEC_SEC).stdout or "/").strip() or "/"
    argv = ["bash", "-c", f"bash {shlex.quote(cwd.rstrip('/') + '/setup.sh')} 2>&1"] if files.setup else ["true"]
    res = sandbox.exec_with_files([(files.workdir, cwd)], argv, timeout=SETUP_TIMEOUT_SEC)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "setup.txt").write_text(res.stdout + res.stderr)
    if res.timed_out:
        return f"step {files.name!r}: setup.sh exceeded {SETUP_TIMEOUT_SEC:g} s"
    if res.exit_code != 0:
        return f"step {files.name!r}: setup.sh exited {res.exit_code}: {(res.stdout + res.stderr)[-500:]}"
    return None


@dataclass
class StepsOutcome:
    """What the steps did, for agents/trial.py to record: the agent phases as one AgentRun, the trial's
    reward per the strategy (or the infra error of the step that stopped it), and each step's result."""

    run: AgentRun
    reward: float | None
    rewards: dict[str, float]
    error_class: str | None = None
    error: str | None = None
    steps: list[StepResult] = field(default_factory=list)


def run_steps(
    sandbox: Sandbox,
    env: Environment,
    agent: Agent,
    *,
    model: str | None,
    config: QAConfig,
    trial_dir: Path,
    clock,
) -> StepsOutcome:
    """Every step in order, its verifier in this container on the network agents/phases.py decides (a step's
    verifier never runs separately). Each step's files go to <trial>/steps/<name>/{agent,verifier,setup.txt}."""
    strategy = env.config.reward_strategy() or MultiStepRewardStrategy.MEAN
    configs = {s.name: s for s in env.config.steps or []}
    results: list[StepResult] = []
    runs: list[tuple[str, AgentRun]] = []
    infra: StepResult | None = None
    stopped = False
    for index, files in enumerate(env.steps):
        if stopped:
            results.append(StepResult(name=files.name, skipped=True))
            continue
        step, step_dir = configs[files.name], trial_dir / "steps" / files.name
        senv = step_environment(env, files, step)
        if index:
            reset = sandbox.sh(RESET, timeout=SANDBOX_SETUP_EXEC_SEC)
            if reset.exit_code != 0:  # the next agent would see the last step's tests: never run it so
                raise SandboxError(
                    f"step {files.name!r}: could not clear /tests and /logs before it: "
                    f"{(reset.stdout + reset.stderr)[-300:]}"
                )
            restore_agent_network(sandbox, config)
        failed = _setup(sandbox, files, step_dir)
        if failed:
            results.append(
                StepResult(name=files.name, outcome=Outcome.FAIL, stopped="setup.sh failed", error_message=failed)
            )
            stopped = True
            continue
        (step_dir / "agent").mkdir(parents=True, exist_ok=True)
        run = agent_phase(sandbox, senv, agent, model=model, logs_dir=step_dir / "agent", clock=clock)
        runs.append((files.name, run))
        sandbox.download("/logs/agent", step_dir)
        (step_dir / "verifier").mkdir(parents=True, exist_ok=True)
        with clock.phase(Phase.VERIFIER):
            cut_verifier_network(sandbox, config, senv)
            verdict = run_in_place(sandbox, senv, step_dir)
        result = StepResult(
            name=files.name,
            reward=verdict.reward,
            rewards=verdict.rewards,
            error_class=verdict.error_class,
            error_message=verdict.error,
            agent_exit_code=run.exit_code,
            agent_timed_out=run.timed_out,
        )
        if verdict.error_class:
            result.outcome, result.stopped, infra, stopped = Outcome.INFRA, "verifier said nothing usable", result, True
        else:
            passed = (verdict.reward or 0.0) >= config.validate_.pass_threshold
            result.outcome = Outcome.PASS if passed else Outcome.FAIL
            rewards = verdict.rewards or ({"reward": verdict.reward} if verdict.reward is not None else {})
            result.stopped = min_reward_failure(rewards, step.min_reward)
            stopped = result.stopped is not None
        results.append(result)
    run = _agent_run(runs)
    if infra is not None:
        return StepsOutcome(run, None, {}, infra.error_class, f"step {infra.name!r}: {infra.error_message}", results)
    reward, rewards = combine(results, strategy)
    return StepsOutcome(run, 0.0 if reward is None else reward, rewards, steps=results)


def _agent_run(runs: list[tuple[str, AgentRun]]) -> AgentRun:
    """The steps' agent phases as one record: the first non-zero exit code, any timeout, all actions."""
    codes = [r.exit_code for _, r in runs if r.exit_code not in (0, None)]
    return AgentRun(
        exit_code=codes[0] if codes else (runs[-1][1].exit_code if runs else None),
        timed_out=any(r.timed_out for _, r in runs),
        steps=sum(r.steps for _, r in runs),
        summary="; ".join(f"{name}: {r.summary}" for name, r in runs),
    )
