"""The phases every trial mode shares: the agent phase, and the verifier's container, network and run.

A trial is build/start -> agent phase -> (collect artifacts) -> verifier phase -> rewards -> record, whatever the
mode (agents/trial.py; multi-step: per step, agents/steps.py). The mode decides only two things, each in ONE
function here:
- `container_spec`: the spec of a container a trial starts, the trial's own (the agent, and the verifier in
  shared, multi-step and compose modes) or a separate verifier's fresh one (agents/verify_separate.py);
- `verifier_network`: the network the verifier phase runs on (shared: cut the trial's container or keep its
  network; separate: the fresh container's network).
`run_in_place` is the verifier itself, in the container it is given: the shared verifier runs it in the agent's
container, the separate verifier in its fresh one. This module is below trial.py, verify_separate.py and
steps.py, so none of them hands another a callable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from envqa.agents.base import Agent, AgentContext, AgentRun
from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.models import Phase
from envqa.core.network_policy import agent_network_of, names_resolve, verifier_network_of
from envqa.core.rewards import VerifierError, parse_reward_files
from envqa.core.sandbox import Sandbox, SandboxSpec
from envqa.core.task_config import NetworkMode, VerifierEnvironmentMode
from envqa.core.tb1_parsers import output_parser

ARTIFACTS_DIR = "/logs/artifacts"  # harbor/models/trial/paths.py EnvironmentPaths.artifacts_dir
AGENT_DIRS = ["/logs/agent", ARTIFACTS_DIR]  # the agent's container in separate mode: no /logs/verifier
SHARED_DIRS = ["/logs/agent", "/logs/verifier"]  # the agent's container when the verifier runs in it
VERIFIER_DIRS = ["/logs/verifier", ARTIFACTS_DIR]  # a separate verifier's own container

# With the network cut, package managers fail at once instead of retrying with backoff (pip: ~10 s per
# install). Only retry counts and timeouts change, never what the verifier checks; the task's own
# [verifier].env wins over these.
OFFLINE_FAST_FAIL = {
    "PIP_RETRIES": "0",
    "PIP_TIMEOUT": "3",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "UV_HTTP_TIMEOUT": "3",
    "UV_HTTP_RETRIES": "0",
    "NPM_CONFIG_FETCH_RETRIES": "0",
    "NPM_CONFIG_FETCH_TIMEOUT": "3000",
    # glibc's resolver: one 1 s try instead of resolv.conf's (Docker: 2 x 5 s per name lookup)
    "RES_OPTIONS": "timeout:1 attempts:1",
}


class Role(StrEnum):
    """Which container of a trial a spec is for."""

    TRIAL = "trial"  # the agent's (and the verifier's, unless it runs separately)
    VERIFIER = "verifier"  # a separate verifier's fresh container


@dataclass
class VerifierOutcome:
    reward: float | None
    rewards: dict[str, float]
    error_class: str | None = None
    error: str | None = None


def agent_phase(
    sandbox: Sandbox, env: Environment, agent: Agent, *, model: str | None, logs_dir: Path, clock
) -> AgentRun:
    """The agent acts in the trial's container with the task's (or the step's) instruction, timed by `clock`
    (agents/trial.py `_Clock`); an agent that returns past its deadline counts as timed out."""
    with clock.phase(Phase.AGENT):
        deadline = time.monotonic() + env.agent_timeout_sec
        run = agent.run(
            AgentContext(
                sandbox=sandbox,
                env=env,
                instruction=env.instruction,
                timeout_sec=env.agent_timeout_sec,
                logs_dir=logs_dir,
                model=model,
            )
        )
        run.timed_out = run.timed_out or time.monotonic() > deadline
    return run


def separate(env: Environment) -> bool:
    """Whether the task's (single-step) verifier runs in its own container (a multi-step task's steps are
    agents/steps.py's)."""
    return not env.config.steps and env.config.verifier_mode() == VerifierEnvironmentMode.SEPARATE


def verifier_network(env: Environment | None, config: QAConfig, *, shares: str | None) -> str:
    """The network the verifier phase runs on: "none", or the one it keeps or gets.

    `shares` is the network of the trial's container when the verifier runs in it (shared, multi-step, compose),
    None for a container of its own (separate). `[sandbox] verifier_network = "none"` or a verifier phase that
    declares `no-network` (Harbor trial/network_policy.py: `[verifier] network_mode`) always means none. A shared
    verifier otherwise keeps the agent's network (an allowlist keeps its proxy); a separate verifier's container
    gets a network only when its policy is public and `[sandbox] default_network` allows one (allowlists are not
    proxied for it yet). `env` None: a verifier rerun without the task's policy at hand, `[sandbox]` decides."""
    policy = verifier_network_of(env) if env is not None else None
    if config.sandbox.verifier_network == "none" or policy == NetworkMode.NO_NETWORK:
        return "none"
    if shares is not None:
        return shares
    if policy != NetworkMode.PUBLIC or config.sandbox.default_network == "none":
        return "none"
    return "bridge"


def container_spec(
    env: Environment, image: str, config: QAConfig, labels: dict[str, str], role: Role = Role.TRIAL
) -> SandboxSpec:
    """The one place a trial's container spec is built. Limits from task.toml: `[environment]` for the trial's
    container, `[verifier.environment]` (else a copy of `[environment]`) for a separate verifier's. The trial's
    network is the stricter of the agent phase's policy and `[sandbox] default_network`; a separate verifier's
    is `verifier_network`'s. In separate mode the agent's container has no /logs/verifier at all."""
    if role == Role.VERIFIER:
        limits = env.config.verifier_environment() or env.config.environment
        network, dirs = verifier_network(env, config, shares=None), VERIFIER_DIRS
    else:
        limits = env.config.environment
        cut = config.sandbox.default_network == "none" or agent_network_of(env) == NetworkMode.NO_NETWORK
        network, dirs = "none" if cut else "bridge", AGENT_DIRS if separate(env) else SHARED_DIRS
    return SandboxSpec(
        image=image,
        cpus=limits.cpus,
        memory_mb=limits.memory_mb,
        pids_limit=limits.pids_limit or config.sandbox.pids_limit,
        disk_limit_mb=limits.storage_mb,
        network=network,
        env=dict(limits.env),
        labels=labels,
        output_limit_bytes=config.sandbox.output_limit_bytes,
        init_dirs=list(dirs),
    )


def cut_verifier_network(sandbox: Sandbox, config: QAConfig, env: Environment | None = None) -> None:
    """Before a verifier that runs in the trial's container: disconnect it when `verifier_network` says none."""
    network = sandbox.spec.network
    if network == "none" or verifier_network(env, config, shares=network) != "none":
        return
    try:
        sandbox.cut_network()
    except NotImplementedError:
        return  # a backend without networks to cut


def restore_agent_network(sandbox: Sandbox, config: QAConfig) -> None:
    """Multi-step: the next step's agent gets the network the task declares again (the verifier's cut is per
    phase). Only a cut `[sandbox] verifier_network = "none"` made is restored (as before this module)."""
    if config.sandbox.verifier_network != "none" or sandbox.spec.network == "none":
        return
    try:
        sandbox.restore_network()
    except NotImplementedError:
        return


def verifier_offline(sandbox: Sandbox) -> bool:
    """No route out: network none, cut for the verifier, only internal Docker networks (the fake internet), or a
    network on a machine where public names do not resolve (core/network_policy.py names_resolve)."""
    try:
        offline = sandbox.offline()
    except NotImplementedError:
        offline = sandbox.spec.network == "none"
    return offline or not names_resolve()


def run_in_place(sandbox: Sandbox, env: Environment, trial_dir: Path, timeout: float | None = None) -> VerifierOutcome:
    """Upload tests/, run the verifier in this container, read its verdict from what it left in /logs/verifier
    (or, for a Terminal-Bench task, its output, read by the parser its task.yaml names: core/tb1_parsers.py)."""
    trial_dir = Path(trial_dir)
    venv = {**(OFFLINE_FAST_FAIL if verifier_offline(sandbox) else {}), "TEST_DIR": "/tests", **env.config.verifier.env}
    res = sandbox.exec_with_files(
        [(c.source, c.target) for c in env.tests],
        ["bash", "-c", f"mkdir -p /logs/verifier && {env.verifier_command}"],
        timeout=timeout or env.config.verifier.timeout_sec,
        env=venv,
    )
    (trial_dir / "verifier" / "test-stdout.txt").write_text(res.stdout + ("\n" + res.stderr if res.stderr else ""))
    if res.timed_out:
        return VerifierOutcome(
            None, {}, "verifier_timeout", f"verifier exceeded timeout_sec={env.config.verifier.timeout_sec:g}"
        )
    for name in ("reward.txt", "reward.json"):  # never read a reward left by an earlier attempt
        (trial_dir / "verifier" / name).unlink(missing_ok=True)
    sandbox.download("/logs/verifier", trial_dir)  # -> trial_dir/verifier/: the reward files are read there
    parser = output_parser(env.reward_source)
    try:
        if parser is not None:
            reward, rewards = parser(res.stdout + "\n" + res.stderr)
        else:
            reward, rewards = parse_reward_files(
                _read_local(trial_dir / "verifier" / "reward.txt"), _read_local(trial_dir / "verifier" / "reward.json")
            )
    except VerifierError as e:
        return VerifierOutcome(None, {}, "verifier_error", f"{e} (test.sh exited {res.exit_code})")
    return VerifierOutcome(reward, rewards)


def _read_local(path: Path) -> str | None:
    """A reward file as downloaded (one archive call for the whole directory, not one per file).
    Only regular files count: a symlink planted as reward.txt is not followed."""
    if path.is_symlink() or not path.is_file():
        return None
    with open(path, "rb") as fh:
        return fh.read(1024 * 1024).decode("utf-8", errors="replace")
