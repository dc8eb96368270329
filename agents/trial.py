"""One trial, end to end: image, container, agent phase, verifier phase, record.

Every path out removes the container (`with` on the sandbox), writes result.json, and returns a
TrialResult whose outcome is pass, fail, or infra with an error class. Infra covers both the machinery
failing (`sandbox_*`, `docker_unavailable`) and the verifier saying nothing usable
(`verifier_error`, `verifier_timeout`): neither may count as a fail in a pass rate.

Every mode runs the same trial: build/start -> agent phase -> (collect artifacts) -> verifier phase ->
rewards -> record. Shared (and compose sidecars): the verifier runs in the agent's container; separate: in a
fresh one given the artifacts (agents/verify_separate.py); multi-step: each step's agent and verifier in the
one container (agents/steps.py). The mode decides only the verifier's container spec and its network, each in
one function of agents/phases.py; the backend and config are passed, never looked up.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import structlog

from envqa.agents.base import Agent, AgentRun
from envqa.agents.catalog import create_agent
from envqa.agents.phases import (
    OFFLINE_FAST_FAIL,
    VerifierOutcome,
    agent_phase,
    container_spec,
    cut_verifier_network,
    run_in_place,
    separate,
    verifier_offline,
)
from envqa.agents.steps import run_steps
from envqa.agents.verify_separate import run_separate_verifier
from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.errors import InfraError
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, Phase, PhaseTiming, TrialResult, TrialSpec, utcnow
from envqa.core.network_policy import allowlist_of
from envqa.core.sandbox import ImageBuildError, Sandbox, SandboxBackend, SandboxError
from envqa.core.task_layout import sidecars

log = structlog.get_logger(__name__)

# Where they always were, for their callers (probes, tests, benchmarks): agents/phases.py builds every container
# spec of a trial and decides the verifier's network.
__all__ = [
    "OFFLINE_FAST_FAIL",
    "TrialVerifier",
    "VerifierOutcome",
    "cut_verifier_network",
    "run_trial",
    "run_verifier",
    "sandbox_spec",
    "task_backend",
    "verifier_offline",
    "with_egress",
]
sandbox_spec = container_spec  # the trial's own container (Role.TRIAL)


def with_egress(
    backend: SandboxBackend,
    env: Environment,
    config: QAConfig,
    *,
    upstream: str | None = None,
    labels: dict[str, str] | None = None,
) -> SandboxBackend:
    """The one place egress is wrapped: an allowlist-mode task that gets a network at all gets it only through an
    egress proxy for its allowed hosts, reaching out on `upstream` (a probe's rerun network), else
    `[probes] egress_network`, else the default bridge. A backend without a proxy to put in front, or a wrapper
    that already chose the network (a probe's rerun: probes/base.py), is returned as it is."""
    allowed = allowlist_of(env)
    if allowed is None:
        return backend
    try:
        return backend.with_egress_allowlist(
            allowed,
            image=config.sandbox.base_image,
            upstream=upstream or config.probes.egress_network or "bridge",
            label=config.sandbox.label,
            labels=labels,
        )
    except NotImplementedError:
        return backend


def task_backend(backend: SandboxBackend, env: Environment, config: QAConfig) -> SandboxBackend:
    """The backend a trial of `env` starts its sandbox with: a task with compose services beside main gets them
    started with it (sandbox/sidecars.py); allowlist mode goes through an egress proxy (`with_egress`)."""
    if sidecars(env.compose_services):
        try:
            backend = backend.with_sidecars(env)
        except NotImplementedError as e:
            raise SandboxError(f"{env.compose_file}: {e}", "sidecar_failed") from None
    return with_egress(backend, env, config)


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


def run_verifier(
    sandbox: Sandbox,
    env: Environment,
    trial_dir,
    timeout: float | None = None,
    *,
    backend: SandboxBackend | None = None,
    config: QAConfig | None = None,
) -> VerifierOutcome:
    """Upload tests/, run the verifier, read its verdict. Also used by probes on a kept end state (through
    `TrialVerifier`, which carries the backend and config). Shared mode: in `sandbox`. Separate verifier mode:
    in a fresh verifier container started on `backend`, given the artifacts (agents/verify_separate.py)."""
    if not separate(env):
        return run_in_place(sandbox, env, trial_dir, timeout)
    if backend is None or config is None:
        raise InfraError("a separate verifier needs the backend the trial ran on", "verifier_error")
    return run_separate_verifier(sandbox, env, trial_dir, timeout, backend=backend, config=config)


@dataclass(frozen=True)
class TrialVerifier:
    """The verifier of trials run on `backend` with `config`, to run again on a kept end state (probes' reruns):
    a separate verifier's fresh container starts on that backend."""

    backend: SandboxBackend
    config: QAConfig

    def run(self, sandbox: Sandbox, env: Environment, trial_dir, timeout: float | None = None) -> VerifierOutcome:
        return run_verifier(sandbox, env, trial_dir, timeout, backend=self.backend, config=self.config)


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
                container_spec(env, image, config, {"envqa.run": spec.run_id, "envqa.trial": spec.trial_id})
            )
        with sandbox:
            steps = []
            if env.steps:  # [[steps]]: each step's setup, agent and verifier in this container (agents/steps.py)
                out = run_steps(sandbox, env, agent, model=spec.model, config=config, trial_dir=trial_dir, clock=clock)
                run, steps = out.run, out.steps
                verdict = VerifierOutcome(out.reward, out.rewards, out.error_class, out.error)
            else:
                run = agent_phase(sandbox, env, agent, model=spec.model, logs_dir=trial_dir / "agent", clock=clock)
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
