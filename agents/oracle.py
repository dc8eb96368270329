"""The oracle: runs the environment's reference solution. It must pass every time."""

from __future__ import annotations

from envqa.agents.base import AgentContext, AgentRun, register_agent


@register_agent("oracle")
class OracleAgent:
    def __init__(self, **_ignored) -> None:  # factories all take (model=, config=); this agent needs neither
        pass

    name = "oracle"

    def run(self, ctx: AgentContext) -> AgentRun:
        for copy in ctx.env.solution:
            ctx.sandbox.upload(copy.source, copy.target)
        res = ctx.sandbox.exec(
            ["bash", "-c", f"{ctx.env.solution_command} > /logs/agent/oracle.txt 2>&1"],
            timeout=ctx.timeout_sec, env=ctx.env.config.solution.env or None,
        )
        (ctx.logs_dir / "exec.txt").write_text(
            f"exit_code={res.exit_code} timed_out={res.timed_out} seconds={res.duration_sec:.2f}\n"
        )
        return AgentRun(exit_code=res.exit_code, timed_out=res.timed_out, steps=1,
                        summary="timed out" if res.timed_out else f"solve.sh exited {res.exit_code}")
