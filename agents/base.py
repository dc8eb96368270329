"""The agent role: given a running sandbox and the instruction, act until done or out of time.

Agents see only `Sandbox` (never docker) and the instruction; tests/ and solution/ are not in the
container while they run. Each agent is registered by name so config can pick it and the store can
record which one produced a trial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from pydantic import BaseModel

from envqa.core.environment import Environment
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


AgentFactory = Callable[..., Agent]
_REGISTRY: dict[str, AgentFactory] = {}


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    def deco(factory: AgentFactory) -> AgentFactory:
        _REGISTRY[name] = factory
        return factory
    return deco


def create_agent(name: str, **kwargs) -> Agent:
    from envqa.agents import hunter, nop, oracle, solver  # noqa: F401  (registers the built-in agents)

    if name not in _REGISTRY:
        raise KeyError(f"unknown agent {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](**kwargs)
