"""One trial, end to end: image, container, agent phase, verifier phase, record.

Every path out removes the container (`with` on the sandbox), writes result.json, and returns a
TrialResult whose outcome is pass, fail, or infra with an error class. Infra covers both the machinery
failing (`sandbox_*`, `docker_unavailable`) and the verifier saying nothing usable
(`verifier_error`, `verifier_timeout`): neither may count as a fail in a pass rate.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass

import structlog

from envqa.agents.base import Agent, AgentContext, AgentRun
from envqa.agents.catalog import create_agent
from envqa.agents.steps import run_steps
from envqa.agents.verify_separate import AGENT_DIRS as SEPARATE_AGENT_DIRS
from envqa.agents.verify_separate import run_separate_verifier
from envqa.agents.verify_separate import separate as separate_verifier
from envqa.core.config import QAConfig
from envqa.core.environment import Environment, RewardSource
from envqa.core.errors import InfraError
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, Phase, PhaseTiming, TrialResult, TrialSpec, utcnow
from envqa.core.network_policy import allowlist_of, names_resolve, verifier_network_of
from envqa.core.rewards import VerifierError, parse_pytest, parse_reward_files
from envqa.core.sandbox import ImageBuildError, Sandbox, SandboxBackend, SandboxError, SandboxSpec
from envqa.core.task_config import NetworkMode
from envqa.core.task_layout import sidecars

log = structlog.get_logger(__name__)


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


def cut_verifier_network(sandbox: Sandbox, config: QAConfig, env: Environment | None = None) -> None:
    """`[sandbox] verifier_network = "none"`, or a task whose verifier phase declares `no-network` (Harbor
    trial/network_policy.py: `[verifier] network_mode`): disconnect the container before the verifier."""
    declared_cut = env is not None and verifier_network_of(env) == NetworkMode.NO_NETWORK
    if (config.sandbox.verifier_network != "none" and not declared_cut) or sandbox.spec.network == "none":
        return
    try:
        sandbox.cut_network()
    except NotImplementedError:
        return  # a backend without networks to cut


def verifier_offline(sandbox: Sandbox) -> bool:
    """No route out: network none, cut for the verifier, only internal Docker networks (the fake internet), or a
    network on a machine where public names do not resolve (core/network_policy.py names_resolve)."""
    try:
        offline = sandbox.offline()
    except NotImplementedError:
        offline = sandbox.spec.network == "none"
    return offline or not names_resolve()


def task_backend(backend: SandboxBackend, env: Environment, config: QAConfig) -> SandboxBackend:
    """The backend a trial of `env` starts its sandbox with: allowlist-mode tasks that get a network at all
    get it only through an egress proxy (upstream: `[probes] egress_network`, else the default bridge).
    A task with compose services beside main gets them started with it (sandbox/sidecars.py)."""
    if sidecars(env.compose_services):
        try:
            backend = backend.with_sidecars(env)
        except NotImplementedError as e:
            raise SandboxError(f"{env.compose_file}: {e}", "sidecar_failed") from None
    allowed = allowlist_of(env)
    if allowed is None:
        return backend
    try:
        return backend.with_egress_allowlist(
            allowed,
            image=config.sandbox.base_image,
            upstream=config.probes.egress_network or "bridge",
            label=config.sandbox.label,
        )
    except NotImplementedError:
        return backend  # no proxy to put in front (or a wrapper that already chose the network: probes)


@dataclass
class VerifierOutcome:
    reward: float | None
    rewards: dict[str, float]
    error_class: str | None = None
    error: str | None = None


class _Clock:
    def __init__(self) -> None:
        self.timings: list[PhaseTiming] = []

    def phase(self, phase: Phase):
        clock = self

        class _Span:
            def __enter__(self_inner):
                self_inner.start = utcnow()

            def __exit__(self_inner, *exc):
                clock.timings.append(PhaseTiming(phase=phase, started_at=self_inner.start, finished_at=utcnow()))

        return _Span()


def sandbox_spec(env: Environment, image: str, config: QAConfig, labels: dict[str, str]) -> SandboxSpec:
    """Limits from task.toml; network is the stricter of the task's and the configured default."""
    ec = env.config.environment
    wanted = env.config.agent.network_mode or ec.baseline_network()
    network = "none" if config.sandbox.default_network == "none" or wanted == NetworkMode.NO_NETWORK else "bridge"
    return SandboxSpec(
        image=image,
        cpus=ec.cpus,
        memory_mb=ec.memory_mb,
        pids_limit=ec.pids_limit or config.sandbox.pids_limit,
        disk_limit_mb=ec.storage_mb,
        network=network,
        env=dict(ec.env),
        labels=labels,
        output_limit_bytes=config.sandbox.output_limit_bytes,
        init_dirs=SEPARATE_AGENT_DIRS if separate_verifier(env) else ["/logs/agent", "/logs/verifier"],
    )


def run_verifier(
    sandbox: Sandbox,
    env: Environment,
    trial_dir,
    timeout: float | None = None,
    *,
    backend: SandboxBackend | None = None,
    config: QAConfig | None = None,
) -> VerifierOutcome:
    """Upload tests/, run the verifier, read its verdict. Also used by probes on a kept end state.
    Separate verifier mode: in a fresh verifier container given the artifacts (agents/verify_separate.py)."""
    if separate_verifier(env):
        return run_separate_verifier(
            sandbox, env, trial_dir, timeout, run_verifier=run_verifier, backend=backend, config=config
        )
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
    try:
        if env.reward_source == RewardSource.PYTEST:
            reward, rewards = parse_pytest(res.stdout + "\n" + res.stderr)
        else:
            reward, rewards = parse_reward_files(
                _read_local(trial_dir / "verifier" / "reward.txt"), _read_local(trial_dir / "verifier" / "reward.json")
            )
    except VerifierError as e:
        return VerifierOutcome(None, {}, "verifier_error", f"{e} (test.sh exited {res.exit_code})")
    return VerifierOutcome(reward, rewards)


def _read_local(path) -> str | None:
    """A reward file as downloaded (one archive call for the whole directory, not one per file).
    Only regular files count: a symlink planted as reward.txt is not followed."""
    if path.is_symlink() or not path.is_file():
        return None
    with open(path, "rb") as fh:
        return fh.read(1024 * 1024).decode("utf-8", errors="replace")


def run_trial(
    spec: TrialSpec,
    env: Environment,
    backend: SandboxBackend,
    config: QAConfig,
    layout: RunLayout,
    agent: Agent | None = None,
    keep_sandbox=None,
) -> TrialResult:
    """Run one trial. `keep_sandbox(sandbox, result)` (probes) sees the end state before teardown."""
    agent = agent or create_agent(spec.agent, model=spec.model, config=config)
    clock = _Clock()
    trial_dir = layout.trial_dir(spec.trial_id)
    started = utcnow()
    base = dict(
        trial_id=spec.trial_id,
        run_id=spec.run_id,
        env_version=env.version,
        agent=spec.agent,
        model=spec.model,
        purpose=spec.purpose,
        artifacts_dir=str(trial_dir),
        started_at=started,
    )
    run = AgentRun()
    try:
        with clock.phase(Phase.BUILD):
            image, _built = backend.ensure_image(env)
        with clock.phase(Phase.START):
            sandbox = task_backend(backend, env, config).start(  # allowlist mode: through an egress proxy
                sandbox_spec(env, image, config, {"envqa.run": spec.run_id, "envqa.trial": spec.trial_id})
            )
        with sandbox:
            steps = []
            if env.steps:  # [[steps]]: each step's setup, agent and verifier in this container (agents/steps.py)
                out = run_steps(
                    sandbox,
                    env,
                    agent,
                    model=spec.model,
                    config=config,
                    trial_dir=trial_dir,
                    clock=clock,
                    verify=run_verifier,
                    cut_network=cut_verifier_network,
                )
                run, steps = out.run, out.steps
                verdict = VerifierOutcome(out.reward, out.rewards, out.error_class, out.error)
            else:
                with clock.phase(Phase.AGENT):
                    deadline = time.monotonic() + env.agent_timeout_sec
                    run = agent.run(
                        AgentContext(
                            sandbox=sandbox,
                            env=env,
                            instruction=env.instruction,
                            timeout_sec=env.agent_timeout_sec,
                            logs_dir=trial_dir / "agent",
                            model=spec.model,
                        )
                    )
                    run.timed_out = run.timed_out or time.monotonic() > deadline
                sandbox.download("/logs/agent", trial_dir)
                with clock.phase(Phase.VERIFIER):
                    cut_verifier_network(sandbox, config, env)
                    verdict = run_verifier(sandbox, env, trial_dir, backend=backend, config=config)
            result = _result(base, clock, run, verdict, config)
            result.step_results = steps
            if keep_sandbox is not None:
                keep_sandbox(sandbox, result)
    except ImageBuildError as e:
        cls = "image_build_timeout" if e.timed_out else "image_build_failed"
        result = TrialResult(
            **base,
            outcome=Outcome.INFRA,
            error_class=cls,
            error_message=f"{e}\n{e.log_tail}".strip(),
            timings=clock.timings,
        )
    except InfraError as e:
        result = TrialResult(
            **base,
            outcome=Outcome.INFRA,
            error_class=e.error_class,
            error_message=str(e),
            timings=clock.timings,
            agent_exit_code=run.exit_code,
        )
    except Exception as e:  # an agent (or our code) crashed: record it with its traceback, keep the run going
        log.exception("trial.crashed", trial_id=spec.trial_id, agent=spec.agent)
        result = TrialResult(
            **base,
            outcome=Outcome.INFRA,
            error_class="agent_error",
            error_message=f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}",
            timings=clock.timings,
            agent_exit_code=run.exit_code,
        )
    result.finished_at = utcnow()
    layout.write_result(result)
    log.info(
        "trial.done",
        trial_id=spec.trial_id,
        agent=spec.agent,
        outcome=result.outcome,
        reward=result.reward,
        error_class=result.error_class,
    )
    return result


def _result(base: dict, clock: _Clock, run: AgentRun, verdict: VerifierOutcome, config: QAConfig) -> TrialResult:
    if verdict.error_class:
        outcome = Outcome.INFRA
    else:
        outcome = Outcome.PASS if (verdict.reward or 0.0) >= config.validate_.pass_threshold else Outcome.FAIL
    return TrialResult(
        **base,
        outcome=outcome,
        reward=verdict.reward,
        rewards=verdict.rewards,
        error_class=verdict.error_class,
        error_message=verdict.error,
        agent_exit_code=run.exit_code,
        agent_timed_out=run.timed_out,
        timings=list(clock.timings),
    )
