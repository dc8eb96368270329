"""The nop agent does nothing. If it earns reward, the verifier does not check the work."""

from __future__ import annotations

from envqa.agents.base import AgentContext, AgentRun, ModelFreeAgent, register_agent


@register_agent("nop")
class NopAgent(ModelFreeAgent):
    name = "nop"

    def run(self, ctx: AgentContext) -> AgentRun:
        return AgentRun(exit_code=0, steps=0, summary="did nothing")
