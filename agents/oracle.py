"""The oracle: runs the environment's reference solution. It must pass every time."""

from __future__ import annotations

from envqa.agents.base import AgentContext, AgentRun, ModelFreeAgent, register_agent


@register_agent("oracle")
class OracleAgent(ModelFreeAgent):
    name = "oracle"

    def run(self, ctx: AgentContext) -> AgentRun:
        # Output comes back through the sandbox's capped exec stream and is written on the host, never
        # redirected to a file in the container: a solve.sh printing 1 GB must not fill the sandbox disk.
        res = ctx.sandbox.exec_with_files(
            [(c.source, c.target) for c in ctx.env.solution],  # uploaded in the same call
            ["bash", "-c", f"{ctx.env.solution_command} 2>&1"],
            timeout=ctx.timeout_sec,
            env=ctx.env.config.solution.env or None,
        )
        ctx.logs_dir.mkdir(parents=True, exist_ok=True)
        (ctx.logs_dir / "oracle.txt").write_text(res.stdout + res.stderr)
        (ctx.logs_dir / "exec.txt").write_text(
            f"exit_code={res.exit_code} timed_out={res.timed_out} seconds={res.duration_sec:.2f} "
            f"output_bytes={res.output_bytes} truncated={res.truncated}\n"
        )
        return AgentRun(
            exit_code=res.exit_code,
            timed_out=res.timed_out,
            steps=1,
            summary="timed out" if res.timed_out else f"solve.sh exited {res.exit_code}",
        )
