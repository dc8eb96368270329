"""Suspicious solver passes, replayed under strace: the commands a model ran, re-run without the model.

A sweep pass is only a number; whether it was earned shows in what the process tree did. Re-running the
model would cost money and give a different run, so the probe replays the pass's own bash commands (from
its ATIF trajectory) in a fresh container with host strace attached, then applies the strace rules used
for the oracle (agent-phase writes under /logs/verifier, an existing tool run where the task asks to
write one). Only suspicious passes are replayed (commands touching the verifier's files or the harness,
or a task that asks for a tool), at most `[probes] solver_replays` of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import structlog
from pydantic import ValidationError

from envqa.agents.base import AgentContext, AgentRun
from envqa.agents.trajectory import Trajectory
from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.wrap_tools import task_tests_text
from envqa.probes.base import ProbeContext, register_probe
from envqa.probes.network.strace_rules import pass_findings, wrapped_tools

log = structlog.get_logger(__name__)

SUSPICIOUS = re.compile(
    r"/logs/verifier|reward\.(txt|json)|(^|[\s'\"=])/tests\b|(^|[\s'\"=])/solution\b"
    r"|conftest\.py|sitecustomize|PYTEST_PLUGINS"
)


def solver_commands(result: TrialResult) -> list[str]:
    """The bash commands of a solver trial, in order, from its trajectory (empty when there is none)."""
    path = Path(result.artifacts_dir or "") / "agent" / "trajectory.json"
    if not path.is_file():
        return []
    try:
        trajectory = Trajectory.model_validate_json(path.read_text())
    except (ValidationError, ValueError) as e:
        log.warning("solver_replay.bad_trajectory", trial=result.trial_id, error=str(e))
        return []
    return [
        c.arguments["command"]
        for s in trajectory.steps
        for c in (s.tool_calls or [])
        if c.function_name == "bash" and isinstance(c.arguments.get("command"), str)
    ]


def suspicious(commands: list[str], instruction: str) -> bool:
    return bool(wrapped_tools(instruction)) or any(SUSPICIOUS.search(c) for c in commands)


class ReplayAgent:
    """Re-runs recorded bash commands one by one, like the solver ran them; keeps a transcript."""

    name = "solver-replay"

    def __init__(self, commands: list[str], source: str):
        self.commands, self.source = commands, source

    def run(self, ctx: AgentContext) -> AgentRun:
        lines = [f"# replay of {self.source}: {len(self.commands)} bash command(s)"]
        last = None
        for command in self.commands:
            res = ctx.sandbox.exec(
                ["bash", "-c", command], timeout=min(120.0, ctx.timeout_sec), user=ctx.env.config.agent.user or None
            )
            last = res.exit_code
            lines += [f"$ {command[:400]}", (res.stdout + res.stderr).strip()[-2000:], f"[exit {res.exit_code}]"]
        (ctx.logs_dir / "transcript.txt").write_text("\n".join(lines) + "\n")
        return AgentRun(exit_code=last, steps=len(self.commands), summary=f"replay of {self.source}")


@register_probe("solver_passes")
def solver_passes_probe(ctx: ProbeContext) -> list[Finding]:
    passes = [t for t in ctx.validation if t.purpose == "sweep" and t.outcome == Outcome.PASS]
    if not passes:
        ctx.skip("solver_passes", "no solver trial passed (or no model was configured): nothing to replay")
    findings: list[Finding] = []
    replayed = 0
    for source in passes:
        if replayed >= ctx.settings.solver_replays:
            break
        commands = solver_commands(source)
        if not commands or not suspicious(commands, ctx.env.instruction):
            continue
        replayed += 1
        trial = ctx.trial(ReplayAgent(commands, source.trial_id), purpose="hunt-solver-replay", trace=True)
        who = f"a solver pass ({source.model or source.agent}, trial {source.trial_id}, replayed as {trial.result.trial_id})"
        for f in pass_findings(trial, ctx.env.instruction, who, tests_text=task_tests_text(ctx.env)):
            f.trial_ids = [source.trial_id, *f.trial_ids]
            findings.append(f)
    return findings
