"""Which hosts a task may reach: network policy as data, read from task.toml.

The mechanism that enforces it (an egress proxy on an internal Docker network) belongs to a backend
(`SandboxBackend.with_egress_allowlist`); the roles that decide when to ask for it read the policy here.
"""

from __future__ import annotations

import functools
import socket
import threading

from envqa.core.defaults import RESOLVE_PROBE_SEC
from envqa.core.task_config import NetworkMode

RESOLVE_PROBE_HOST = "pypi.org"  # what a verifier most often reaches for at verify time


def agent_network_of(env) -> NetworkMode:
    """The agent phase's policy: `[agent] network_mode` when set, else the environment's baseline (Harbor
    trial/network_policy.py `_explicit_phase_policy`). Our container starts with it (agents/trial.py)."""
    return env.config.agent.network_mode or env.config.environment.baseline_network()


def verifier_network_of(env) -> NetworkMode:
    """The verifier phase's policy as Harbor resolves it (trial/network_policy.py `resolve_verifier_phase_policy`):
    `[verifier] network_mode` when set, else the baseline of the environment the verifier runs in: the task's
    `[environment]` in shared mode (not the agent phase's override), `[verifier.environment]` in separate mode."""
    c = env.config
    if c.verifier.network_mode is not None:
        return c.verifier.network_mode
    if c.verifier.environment is not None:
        return c.verifier.environment.baseline_network()
    return c.environment.baseline_network()


def verifier_allowlist_of(env) -> list[str] | None:
    """The hosts an allowlist-mode verifier phase may reach, or None when the verifier phase is not in that mode."""
    if verifier_network_of(env) != NetworkMode.ALLOWLIST:
        return None
    c = env.config
    if c.verifier.network_mode is not None:
        return list(c.verifier.allowed_hosts)
    return list((c.verifier.environment or c.environment).allowed_hosts)


def allowlist_of(env) -> list[str] | None:
    """The hosts an allowlist-mode task may reach (agent phase), or None when the task is not in that mode."""
    c = env.config
    if agent_network_of(env) != NetworkMode.ALLOWLIST:
        return None
    return list(c.agent.allowed_hosts or c.environment.allowed_hosts)


@functools.lru_cache(maxsize=1)
def names_resolve(host: str = RESOLVE_PROBE_HOST, timeout: float = RESOLVE_PROBE_SEC) -> bool:
    """Whether this machine resolves a public name within `timeout` (asked once per process).

    With `[sandbox] default_network = "public"` on a machine without DNS, a container's network is up but
    leads nowhere: the verifier's package managers then get the fast-fail settings a cut network gets
    (agents/trial.py), and its resolver errors are judged inconclusive (probes/inconclusive.py), as when qa
    cut the network itself. getaddrinfo has no timeout of its own: it runs in a daemon thread we wait on."""
    answer: list[bool] = []

    def ask() -> None:
        try:
            socket.getaddrinfo(host, 443, proto=socket.IPPROTO_TCP)
            answer.append(True)
        except OSError:
            answer.append(False)

    worker = threading.Thread(target=ask, name="envqa-resolve-probe", daemon=True)
    worker.start()
    worker.join(timeout)
    return bool(answer and answer[0])
