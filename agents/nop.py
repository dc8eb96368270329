"""The nop agent does nothing. If it earns reward, the verifier does not check the work."""

from __future__ import annotations

from envqa.agents.base import AgentContext, AgentRun, register_agent


@register_agent("nop")
class NopAgent:
    def __init__(self, **_ignored) -> None:  # factories all take (model=, config=); this agent needs neither
        pass

    name = "nop"

    def run(self, ctx: AgentContext) -> AgentRun:
        return AgentRun(exit_code=0, steps=0, summary="did nothing")
