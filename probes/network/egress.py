"""Egress: rerun a pass with the network cut; pass -> fail means the pass depended on the network.

The "open" run uses `[probes] egress_network` (a Docker network name, e.g. an allowlist proxy's internal
network) or, when `fake_internet_dir` is set, the backend's fake internet (`SandboxBackend.fake_internet`:
on Docker a container on a fresh internal network).
The "cut" run uses network none. A network-dependent pass is a shortcut unless the task declares that
it needs the network (`network_mode = "public"`/`"allowlist"` in task.toml, or
`[metadata] requires_network = true`), in which case it is only noted.
"""

from __future__ import annotations

from contextlib import contextmanager

from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.task_config import NetworkMode
from envqa.probes.base import ProbeContext, register_probe
from envqa.probes.network.strace_rules import describe


def allows_network(env: Environment) -> bool:
    wanted = env.config.agent.network_mode or env.config.environment.baseline_network()
    return wanted != NetworkMode.NO_NETWORK


def declares_network(env: Environment) -> bool:
    c = env.config
    explicit = {c.agent.network_mode, c.environment.network_mode, c.verifier.network_mode}
    return bool(explicit & {NetworkMode.PUBLIC, NetworkMode.ALLOWLIST}) or c.metadata.get("requires_network") is True


def open_network_available(ctx: ProbeContext) -> bool:
    """An "open" network to run on: a configured one, or a fake internet (a backend capability)."""
    s = ctx.settings
    return bool(s.egress_network) or (bool(s.fake_internet_dir) and ctx.backend.supports("fake_internet"))


@contextmanager
def open_network(ctx: ProbeContext):
    s = ctx.settings
    if s.egress_network:
        yield s.egress_network
        return
    with ctx.backend.fake_internet(
        s.fake_internet_dir,
        s.fake_internet_hosts,
        image=ctx.config.sandbox.base_image,
        label=ctx.config.sandbox.label,
        labels={"envqa.run": ctx.run_id},
    ) as network:
        yield network


@register_probe("egress")
def egress_probe(ctx: ProbeContext) -> list[Finding]:
    s = ctx.settings
    if not allows_network(ctx.env) or not open_network_available(ctx):
        ctx.skip(
            "egress",
            "the task's network is closed, or no open network (egress_network / fake internet) "
            "is configured to compare against",
        )
        return []
    if ctx.config.sandbox.default_network == "none" and ctx.passed("oracle"):
        ctx.skip("egress", "the oracle already passed with no network at all")
        return []  # validation's oracle already passed with no network at all
    with open_network(ctx) as network:
        opened = ctx.trial("oracle", purpose="hunt-egress-open", network=network, trace=s.strace)
    if not opened.passed:
        return []
    cut = ctx.trial("oracle", purpose="hunt-egress-cut", network="none")
    if cut.passed:
        return []
    declared = declares_network(ctx.env)
    connects = [describe(e) for e in opened.events if e.kind == "connect"][:8]
    return [
        Finding.of(
            rule="network-dependent-pass",
            severity=Severity.INFO if declared else Severity.ERROR,
            message=(
                "the oracle passes only with the network: with egress cut the same run fails"
                + (
                    " (the task declares that it needs the network)"
                    if declared
                    else "; the task does not declare a network need, so answers fetched from the network earn reward"
                )
            ),
            evidence=[
                f"trial {opened.result.trial_id} on network {network}: {opened.result.outcome} "
                f"reward={opened.result.reward}",
                f"trial {cut.result.trial_id} with network none: {cut.result.outcome} reward={cut.result.reward}",
            ]
            + connects,
            location="task.toml",
            trial_ids=[opened.result.trial_id, cut.result.trial_id],
            case="declared" if declared else None,
        )
    ]
