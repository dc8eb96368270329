"""Rules over a traced trial's strace events: what the process tree did, by phase.

The agent phase must not touch /logs/verifier (the verifier's verdict lives there), must not read
/tests or /solution (they are not even there for an honest run), and a pass in a "write a compiler"
task whose process tree ran gcc is the seed's canonical shortcut.
"""

from __future__ import annotations

import os
import re

from envqa.core.models import Finding, Phase
from envqa.core.strace import StraceEvent
from envqa.core.wrap_tools import wrapped_tools  # re-exported: which binaries would be a wrapped tool
from envqa.probes.base import HuntTrial


def verifier_log_writes(trial: HuntTrial) -> list[StraceEvent]:
    return [e for e in trial.events_in(Phase.AGENT) if e.write and e.ok and e.path.startswith("/logs/verifier")]


def hidden_reads(trial: HuntTrial) -> list[StraceEvent]:
    return [
        e
        for e in trial.events_in(Phase.AGENT)
        if e.kind == "open" and e.ok and e.path.startswith(("/tests", "/solution"))
    ]


def tool_execs(trial: HuntTrial, tools: set[str], phase: Phase | None = None) -> list[StraceEvent]:
    events = trial.events_in(phase) if phase else trial.events
    return [e for e in events if e.kind == "exec" and os.path.basename(e.path) in tools]


def describe(e: StraceEvent) -> str:
    if e.kind == "exec":
        return f"strace t={e.ts:.3f} pid={e.pid} execve {e.path} {' '.join(e.argv)[:160]}"
    if e.kind == "connect":
        return f"strace t={e.ts:.3f} pid={e.pid} connect {e.address} ({'ok' if e.ok else 'failed'})"
    return f"strace t={e.ts:.3f} pid={e.pid} {e.kind} {e.path}{' (write)' if e.write else ''}"


def resolver_noise(e: StraceEvent) -> bool:
    """Name resolution and local daemons: every program that resolves a host makes these; they prove nothing."""
    addr = e.address or ""
    return addr.endswith(":53") or "nscd" in addr or "resolve" in addr or not re.search(r":\d+$", addr)


def strace_evidence(trial: HuntTrial, instruction: str, limit: int = 12, connects: bool = False) -> list[str]:
    """The lines of a trace that matter for a shortcut finding. Network connects only where the finding is
    about the network (`connects=True`), and never the resolver's own (port 53, nscd): noise elsewhere."""
    lines = [f"agent phase wrote under /logs/verifier: {describe(e)}" for e in verifier_log_writes(trial)]
    lines += [f"agent phase read hidden files: {describe(e)}" for e in hidden_reads(trial)]
    tools = wrapped_tools(instruction)
    if tools:
        lines += [f"existing tool ran: {describe(e)}" for e in tool_execs(trial, tools)]
    if connects:
        lines += [describe(e) for e in trial.events if e.kind == "connect" and not resolver_noise(e)]
    return lines[:limit]


def pass_findings(trial: HuntTrial, instruction: str, who: str, tests_text: str = "") -> list[Finding]:
    """Rules for a traced pass by an agent that is not an exploit (oracle, solver). `tests_text`: the tests'
    files, where a test may forbid the tool (core/wrap_tools.py `task_tests_text`)."""
    if not trial.passed or not trial.traced:
        return []
    findings = []
    tid = [trial.result.trial_id]
    writes = verifier_log_writes(trial)
    if writes:
        findings.append(
            Finding.of(
                rule="pass-after-verifier-log-write",
                message=f"{who} passed after writing under /logs/verifier during the agent phase",
                evidence=[describe(e) for e in writes[:10]],
                location="tests/test.sh",
                trial_ids=tid,
            )
        )
    tools = wrapped_tools(instruction, tests_text=tests_text)
    ran = tool_execs(trial, tools, Phase.AGENT) if tools else []
    if ran:
        findings.append(
            Finding.of(
                rule="pass-runs-existing-tool",
                message=f"{who} passed a task that asks to implement a tool (not only to use one) while running an "
                "existing one "
                f"({', '.join(sorted({os.path.basename(e.path) for e in ran}))})",
                evidence=[describe(e) for e in ran[:10]],
                location="tests/test.sh",
                trial_ids=tid,
            )
        )
    return findings
