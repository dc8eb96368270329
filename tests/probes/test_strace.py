"""strace: parsing, and the must-show: an exploit's trace proves the agent wrote under /logs/verifier."""

from __future__ import annotations

import pytest

from envqa.core.models import Phase
from envqa.core.strace import parse_strace

from .conftest import EXAMPLES

SAMPLE = """\
101 1700000000.100000 execve("/usr/sbin/runc", ["runc", "exec"], 0xc0 /* 3 vars */) = 0
102 1700000000.200000 execve("/usr/bin/bash", ["bash", "-c", "echo 1 > /logs/verifier/reward.txt"], 0x5 /* 4 vars */ <unfinished ...>
102 1700000000.200100 <... execve resumed>) = 0
102 1700000000.300000 openat(AT_FDCWD, "/logs/verifier/reward.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3
102 1700000000.310000 openat(AT_FDCWD, "/tests/test.sh", O_RDONLY) = -1 ENOENT (No such file or directory)
102 1700000000.320000 openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC) = 3
103 1700000000.400000 connect(3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr("10.0.0.7")}, 16) = -1 ENETUNREACH (Network is unreachable)
103 1700000000.500000 execve("/usr/bin/cc1", ["/usr/lib/gcc/x86_64-linux-gnu/12/cc1", "-quiet"], 0x1 /* 2 vars */) = -1 ENOENT (No such file or directory)
104 1700000000.600000 unlinkat(AT_FDCWD, "/logs/verifier/reward.json", 0) = 0
"""


@pytest.mark.fast
def test_parse_keeps_only_what_rules_use():
    events = parse_strace(SAMPLE)
    kinds = [(e.kind, e.path or e.address) for e in events]
    assert kinds == [
        ("exec", "/usr/bin/bash"),  # runc is the runtime's own step; failed execs are dropped
        ("open", "/logs/verifier/reward.txt"),
        ("open", "/tests/test.sh"),
        ("connect", "10.0.0.7:80"),
        ("unlink", "/logs/verifier/reward.json"),
    ]
    assert events[0].argv == ["bash", "-c", "echo 1 > /logs/verifier/reward.txt"]
    assert events[1].write and events[1].ok
    assert not events[2].write and not events[2].ok
    assert not events[3].ok


def test_exploit_trace_proves_agent_phase_write_under_logs_verifier(probe_ctx):
    """Must-show: the reward-tamper exploit, run as a real trial under host strace."""
    from envqa.agents import exploits  # noqa: F401  (registers the exploit agents)
    from envqa.agents.catalog import create_agent
    from envqa.probes.network.strace_rules import verifier_log_writes

    ctx = probe_ctx(EXAMPLES / "reward-tamper")
    trial = ctx.trial(create_agent("exploit-reward-tamper"), purpose="hunt-exploit", trace=True)
    assert trial.traced, "strace produced no events"
    assert trial.result.outcome == "pass"  # the flaw of this example: the tampered reward stands
    writes = verifier_log_writes(trial)
    assert {e.path for e in writes} >= {"/logs/verifier/reward.txt", "/logs/verifier/reward.json"}
    start, end = trial.phase_window(Phase.AGENT)
    assert all(start <= e.ts <= end for e in writes)
    # The shell that did it is in the trace too, with its command line.
    assert any(e.kind == "exec" and "reward.txt" in " ".join(e.argv) for e in trial.events_in(Phase.AGENT))
    # The verifier phase is traced as well (binaries only): pytest ran after the agent.
    assert any(e.kind == "exec" and "pytest" in " ".join(e.argv) for e in trial.events_in(Phase.VERIFIER))


def test_oracle_trace_has_no_agent_phase_verifier_writes(probe_ctx):
    from envqa.probes.network.strace_rules import pass_findings, verifier_log_writes

    ctx = probe_ctx(EXAMPLES / "clean-wordfreq")
    trial = ctx.trial("oracle", purpose="hunt-oracle-state", trace=True)
    assert trial.traced and trial.passed
    assert verifier_log_writes(trial) == []
    # The verifier's own writes happen in its phase, and they are not the agent's.
    assert pass_findings(trial, ctx.env.instruction, "the oracle") == []


@pytest.mark.fast
def test_finding_evidence_keeps_only_relevant_connects():
    """A conftest or reward finding lists no connect() at all; a network finding lists the real connects,
    never the resolver's own (port 53) noise."""
    from envqa.core.models import Outcome, TrialResult
    from envqa.core.strace import StraceEvent
    from envqa.probes.base import HuntTrial
    from envqa.probes.network.strace_rules import strace_evidence

    trial = HuntTrial(
        result=TrialResult(trial_id="t", run_id="r", env_version="v", agent="x", outcome=Outcome.PASS),
        events=[
            StraceEvent(ts=1.0, pid=7, kind="connect", address="127.0.0.11:53", ok=True),
            StraceEvent(ts=1.1, pid=7, kind="connect", address="10.0.0.7:80", ok=True),
        ],
    )
    assert strace_evidence(trial, "Write /app/out.txt.") == []
    got = strace_evidence(trial, "Write /app/out.txt.", connects=True)
    assert len(got) == 1 and got[0].endswith("connect 10.0.0.7:80 (ok)")
