"""Which hosts a task may reach: network policy as data, read from task.toml.

The mechanism that enforces it (an egress proxy on an internal Docker network) belongs to a backend
(`SandboxBackend.with_egress_allowlist`); the roles that decide when to ask for it read the policy here.
"""

from __future__ import annotations

from envqa.core.task_config import NetworkMode


def allowlist_of(env) -> list[str] | None:
    """The hosts an allowlist-mode task may reach (agent phase), or None when the task is not in that mode."""
    c = env.config
    if (c.agent.network_mode or c.environment.baseline_network()) != NetworkMode.ALLOWLIST:
        return None
    return list(c.agent.allowed_hosts or c.environment.allowed_hosts)
