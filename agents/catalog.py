"""Every built-in agent, registered: `create_agent(name)` makes one by the name config and the store use.

The registry and `register_agent` live in agents/base.py, which the agents themselves import; this module
imports the agents (each registers itself as it loads), so the registry is complete without base.py
importing its own users.
"""

from __future__ import annotations

from envqa.agents import (  # noqa: F401  (each registers itself)
    exploit_artifact,
    exploits,
    hunter,
    nop,
    oracle,
    solver,
)
from envqa.agents.base import Agent, registered_agent


def create_agent(name: str, **kwargs) -> Agent:
    """A new agent by registered name; KeyError (naming the known ones) for any other."""
    return registered_agent(name)(**kwargs)
