"""The probe registry: every probe has one signature, `probe(ctx) -> list[Finding]`.

A probe gets a `ProbeContext` (the environment, config, sandbox backend, the validation trials) and
returns findings. Probes that need trials run them through `ctx.trial(...)`, which records each one in
the store and the run directory like any other trial, optionally with host strace attached and on a
chosen network. Probes register by name so config picks which run (`[probes] enabled = [...]`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from envqa.agents.base import Agent, AgentContext, AgentRun
from envqa.agents.catalog import create_agent
from envqa.agents.trial import TrialVerifier, run_trial, with_egress
from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.layout import RunLayout
from envqa.core.models import Finding, Outcome, Phase, TrialResult, TrialSpec
from envqa.core.named import Named
from envqa.core.policy import Action, decide_trial
from envqa.core.queues import SANDBOX_QUEUE, queue_settings
from envqa.core.sandbox import BackendProxy, Sandbox, SandboxBackend, SandboxError, SandboxSpec, SyscallTrace
from envqa.core.strace import EXEC_SYSCALLS, SYSCALLS, StraceEvent

log = structlog.get_logger(__name__)

Probe = Callable[["ProbeContext"], list[Finding]]
# Which probes are registered is probes/catalog.py's business (it imports the built-ins; `run_probes` lives
# there), so this module imports none of its users.
PROBES: Named[Probe] = Named("probe")
register_probe = PROBES.register
registered_probe = PROBES.get


@dataclass
class HuntTrial:
    """A probe's trial: the stored result plus what only the probe saw (strace events, its own notes)."""

    result: TrialResult
    events: list[StraceEvent] = field(default_factory=list)
    traced: bool = False
    notes: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.result.outcome == Outcome.PASS

    def phase_window(self, phase: Phase) -> tuple[float, float] | None:
        t = next((t for t in self.result.timings if t.phase == phase), None)
        return (t.started_at.timestamp(), t.finished_at.timestamp()) if t else None

    def events_in(self, phase: Phase) -> list[StraceEvent]:
        window = self.phase_window(phase)
        if window is None:
            return []
        return [e for e in self.events if window[0] <= e.ts <= window[1]]


class _OnNetwork(BackendProxy):
    """The same backend, with every sandbox started on a given network (egress reruns); compose sidecars pass
    through (sandbox/sidecars.py). It chooses the network, so it offers no allowlist and no fake internet."""

    withheld = frozenset({"with_egress_allowlist", "fake_internet"})

    def __init__(self, inner: SandboxBackend, network: str):
        super().__init__(inner)
        self.network = network

    def start(self, spec: SandboxSpec) -> Sandbox:
        return self.inner.start(spec.model_copy(update={"network": self.network}))


class _Traced:
    """Wraps an agent: attaches a host syscall trace to the sandbox before the agent acts; `finish()` detaches.
    A backend that cannot trace (`start_trace` raises NotImplementedError) leaves the trial untraced."""

    def __init__(self, inner: Agent, out_path: Path):
        self.inner, self.out_path, self.name = inner, out_path, inner.name
        self.session: SyscallTrace | None = None
        self.events: list[StraceEvent] = []

    def _start(self, sandbox: Sandbox, path: Path, syscalls: str) -> bool:
        """False when the backend cannot trace at all (then the verifier phase is not tried either)."""
        try:
            self.session = sandbox.start_trace(path, syscalls)
        except NotImplementedError:
            return False
        except SandboxError as e:
            log.warning("strace.unavailable", error=str(e))
        return True

    def run(self, ctx: AgentContext) -> AgentRun:
        traceable = self._start(ctx.sandbox, self.out_path, SYSCALLS)
        try:
            return self.inner.run(ctx)
        finally:
            if traceable and self.session is not None:  # the verifier phase: binaries and connects only
                self.events += self.session.stop()
                self._start(ctx.sandbox, self.out_path.with_name("strace-verifier.txt"), EXEC_SYSCALLS)

    def finish(self) -> list[StraceEvent]:
        session, self.session = self.session, None
        if session is not None:
            self.events += session.stop()
        return self.events


@dataclass
class ProbeContext:
    env: Environment
    config: QAConfig
    backend: SandboxBackend
    run_id: str
    layout: RunLayout
    validation: list[TrialResult] = field(default_factory=list)
    record: Callable[[TrialResult], None] = lambda r: None
    announce: Callable[[TrialSpec], None] = lambda spec: None  # progress display: a probe trial starts
    new_trials: list[TrialResult] = field(default_factory=list)
    # What ran and what did not, with why: the report's `coverage` (a skipped probe is never silent).
    coverage: list[dict] = field(default_factory=list)

    def skip(self, probe: str, reason: str) -> None:
        """Record that a probe (or one part of it, `probe/part`) did not run, and why."""
        self.coverage.append({"probe": probe, "status": "skipped", "reason": reason})

    def ran(self, probe: str, detail: str | None = None) -> None:
        self.coverage.append({"probe": probe, "status": "ran", "reason": detail})

    @property
    def settings(self):
        return self.config.probes

    @property
    def verifier(self) -> TrialVerifier:
        """The verifier of this context's trials, to run again on a kept end state (a separate verifier starts
        its fresh container on this backend)."""
        return TrialVerifier(self.backend, self.config)

    def passed(self, agent: str) -> list[TrialResult]:
        return [t for t in self.validation if t.agent == agent and t.outcome == Outcome.PASS]

    def trial(
        self,
        agent: str | Agent,
        *,
        purpose: str,
        index: int = 0,
        trace: bool = False,
        network: str | None = None,
        keep: Callable[[Sandbox, TrialResult], None] | None = None,
    ) -> HuntTrial:
        """Run one trial for a probe and record it; `keep(sandbox, result)` sees the end state."""
        impl = create_agent(agent, config=self.config) if isinstance(agent, str) else agent
        spec = TrialSpec(
            run_id=self.run_id, env_version=self.env.version, agent=impl.name, index=index, purpose=purpose
        )
        tracer = _Traced(impl, self.layout.trial_dir(spec.trial_id) / "strace.txt") if trace else None
        events: list[StraceEvent] = []

        notes: dict = {}

        def on_end(sandbox: Sandbox, result: TrialResult) -> None:
            nonlocal events
            try:
                lines = sandbox.egress_log()
            except NotImplementedError:
                lines = None
            if lines is not None:  # allowlist mode: what the proxy let through and refused is evidence
                notes["egress_denied"] = [ln for ln in lines if ln.startswith("DENIED ")]
                path = self.layout.trial_dir(spec.trial_id) / "egress-proxy.log"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(lines) + "\n")
            if tracer is not None:
                events = tracer.finish()  # before `keep`, whose own verifier runs are not the trial's
            if keep is not None:
                keep(sandbox, result)

        backend = self.backend
        if network and network != "none":  # allowlist mode: the open network only through the egress proxy
            backend = with_egress(backend, self.env, self.config, upstream=network, labels={"envqa.run": self.run_id})
        backend = _OnNetwork(backend, network) if network else backend
        self.announce(spec)
        # The machinery's hiccups (a sandbox that failed to start or vanished under load) get the retries a
        # scheduled trial gets, by the same policy (core/policy.py `decide_trial`: the sandbox queue's attempts
        # and backoff), so a probe's question is not lost to one of them (examples/network-fetch once missed
        # its findings that way).
        policy = queue_settings(self.config.scheduler, SANDBOX_QUEUE)
        for attempt in range(1, (policy.max_attempts or 1) + 1):
            if trace and attempt > 1:
                tracer = _Traced(impl, self.layout.trial_dir(spec.trial_id) / "strace.txt")
            try:
                result = run_trial(
                    spec, self.env, backend, self.config, self.layout, agent=tracer or impl, keep_sandbox=on_end
                )
            finally:
                if tracer is not None and tracer.session is not None:
                    events = tracer.finish()
            decision = decide_trial(result, attempt - 1, policy)
            if decision is None or decision.action != Action.RETRY:
                break
            log.warning(
                "probe.trial_retry",
                trial_id=spec.trial_id,
                attempt=attempt,
                error_class=result.error_class,
                delay=round(decision.delay_sec, 3),
                error=(result.error_message or "")[:200],
            )
            time.sleep(decision.delay_sec)  # the queue's backoff, as a queued trial waits (bounded: backoff_max_sec)
        self.record(result)
        self.new_trials.append(result)
        return HuntTrial(result=result, events=events, traced=tracer is not None and bool(events), notes=notes)
