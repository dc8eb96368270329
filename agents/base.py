"""The agent role: given a running sandbox and the instruction, act until done or out of time.

Agents see only `Sandbox` (never docker) and the instruction; tests/ and solution/ are not in the
container while they run. Each agent is registered by name so config can pick it and the store can
record which one produced a trial (agents/catalog.py: `create_agent`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from envqa.core.environment import Environment
from envqa.core.named import Named
from envqa.core.sandbox import Sandbox


@dataclass
class AgentContext:
    sandbox: Sandbox
    env: Environment
    instruction: str
    timeout_sec: float
    logs_dir: Path  # host directory: <trial>/agent/
    model: str | None = None
    extra: dict = field(default_factory=dict)


class AgentRun(BaseModel):
    """What the agent phase did, as the trial record keeps it."""

    exit_code: int | None = None
    timed_out: bool = False
    steps: int = 0
    summary: str = ""


class Agent(Protocol):
    name: str

    def run(self, ctx: AgentContext) -> AgentRun: ...


class ModelFreeAgent:
    """Base of the agents that need no model and no config (oracle, nop): every factory is called with
    (model=, config=), and these ignore both."""

    name = ""

    def __init__(self, **_ignored) -> None:
        pass


AgentFactory = Callable[..., Agent]
# Which agents are registered is agents/catalog.py's business (it imports the built-ins; `create_agent` lives
# there), so this module imports none of its users.
AGENTS: Named[AgentFactory] = Named("agent")
register_agent = AGENTS.register
registered_agent = AGENTS.get
