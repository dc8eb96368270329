"""Trust tracing: which files of the agent's image does the verifier read, import or execute?

On the oracle's kept end state (probes/oracle_state.py), the verifier runs once more under a host strace
that records every open and exec (`TRUST_SYSCALLS`; a validation trial traces only execs in its verifier
phase, to stay cheap). Every regular file it opened or ran that was already in the image is a trust anchor:
not written by the oracle or the verifier (`docker diff` after the run), not the uploaded /tests, not
/logs, and not a system file (packages under /usr, /lib, /etc, interpreters' libraries, pip's entry
points). The agent runs as root in the same container, so it can read each anchor (a leak: derive the
output from what the verifier compares against) and rewrite it (tamper).

A traced list alone is a lead (`verifier-trusts-agent-file` at `info`: reading an input file the task
ships is often legitimate). It becomes a shortcut only when `exploit-trusted-file`, driven by that list
and nothing else (no file-name guessing), earns reward: then both findings are reported, critical, naming
each file and how the verifier used it.

Separate-verifier mode (Harbor 1.4, agents/verify_separate.py): the verifier then runs in a fresh container
that sees only the agent's artifacts, so only anchors among the artifacts could carry this. Tracing that
container is a follow-up: in that mode (and for multi-step tasks) the probe records in the coverage that it
did not trace, and why.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import structlog
from pydantic import BaseModel, Field

from envqa.agents.exploits import TrustedFile
from envqa.agents.trial import run_verifier
from envqa.core.defaults import PROBE_EXEC_SEC, PROBE_QUICK_EXEC_SEC
from envqa.core.environment import Environment
from envqa.core.models import Finding, Outcome, Severity, TrialResult
from envqa.core.registry import EXPLOIT_INFO
from envqa.core.sandbox import Sandbox, SandboxError
from envqa.core.strace import CALL_RE, RUNTIME_BINARIES, STR_RE, joined_calls
from envqa.core.task_config import VerifierEnvironmentMode

log = structlog.get_logger(__name__)

TRUST_SYSCALLS = "execve,execveat,open,openat,chdir"
EXPLOIT = "exploit-trusted-file"
# Files no task author put there for the verifier: the OS and its packages, interpreters and their libraries.
SYSTEM = (
    "/proc/",
    "/sys/",
    "/dev/",
    "/run/",
    "/etc/",
    "/lib",
    "/bin/",
    "/sbin/",
    "/usr/",
    "/var/lib/dpkg/",
    "/var/cache/",
    "/tests/",
    "/logs/",
    "/solution/",
    "/tmp/",
)
# ... except what a task installs by hand under /usr/local (a grader in /usr/local/bin), which is kept.
LOCAL = ("/usr/local/bin/", "/usr/local/sbin/", "/usr/local/share/", "/usr/local/etc/")
LIBRARY = re.compile(r"/(site-packages|dist-packages|node_modules|__pycache__|lib/python[\d.]+|\.[^/]+)/|\.pyc$")
RUNNER = re.compile(r"^(py\.?test(-3)?|python[\d.]*(-config)?|pip[\d.]*|uvx?|node|npm|perl|ruby|bash|sh)$")
INTERPRETERS = re.compile(r"^(python[\d.]*|bash|sh|dash|perl|node|ruby|Rscript|php)$")
IMPORTED = (".py", ".pyc", ".so", ".pth", ".pm", ".rb", ".js")
# One exec in the image: which candidates are regular files (not links), and which are pip's entry points.
CHECK = (
    'for p in "$@"; do [ -f "$p" ] && [ ! -L "$p" ] || continue; '
    'if head -c 600 "$p" 2>/dev/null | grep -q -- "-script\\\\.pyw"; then echo "entry $p"; else echo "file $p"; fi; done'
)


class Anchor(BaseModel):
    """One image file the traced verifier used. `uses`: read | imported | executed; `how`: a trace line."""

    path: str
    uses: list[str] = Field(default_factory=list)
    how: str = ""


def traced_uses(text: str, cwds: list[str] | None = None) -> dict[str, tuple[set[str], str]]:
    """Every path a `strace -f -ttt` text successfully opened read-only or executed: {path: (uses, line)}.
    A relative path (`cd /opt/checker && cat expected.json`) is kept once for each directory it may be
    relative to: every directory the trace chdir()s to, and `cwds` (the verifier's starting directory);
    which of those exist is the image's to say (trace_anchors checks)."""
    uses: dict[str, tuple[set[str], str]] = {}
    relative: list[tuple[str, str, str]] = []
    dirs = list(cwds or [])

    def add(path: str, use: str, line: str) -> None:
        if path.startswith("/"):
            uses.setdefault(os.path.normpath(path), (set(), line.strip()[:300]))[0].add(use)
        elif path and not path.startswith("-"):
            relative.append((path, use, line))

    for _pid, _ts, rest in joined_calls(text):
        c = CALL_RE.match(rest)
        if not c or c.group("ret") == "?" or int(c.group("ret")) < 0:
            continue
        strings = [s for s, _more in STR_RE.findall(c.group("args"))]
        if not strings:
            continue
        if c.group("name") == "chdir":
            if strings[0].startswith("/"):
                dirs.append(strings[0])
            continue
        if c.group("name").startswith("execve"):
            if strings[0] in RUNTIME_BINARIES:
                continue
            add(strings[0], "executed", rest)
            argv = strings[1:]
            if argv and INTERPRETERS.match(os.path.basename(argv[0])) and len(argv) > 1 and "-c" not in argv[1:2]:
                script = next((a for a in argv[1:] if not a.startswith("-")), "")
                add(script, "executed", rest)
        elif "O_DIRECTORY" not in c.group("args") and not re.search(
            r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", c.group("args")
        ):
            path = strings[0]
            add(path, "imported" if path.endswith(IMPORTED) else "read", rest)
    for path, use, line in relative:
        for d in dict.fromkeys(dirs):
            add(os.path.join(d, path), use, line)
    return uses


def _candidate(path: str) -> bool:
    name = os.path.basename(path)
    if LIBRARY.search(path) or RUNNER.match(name) or name.startswith("."):  # dotfiles: shells' and tools' own
        return False
    return path.startswith(LOCAL) or not path.startswith(SYSTEM)


def trace_anchors(sandbox: Sandbox, env: Environment, result: TrialResult) -> list[Anchor] | str:
    """Run the verifier on this end state under a full open/exec trace; the anchors, or why none could be
    traced (a string)."""
    if env.config.verifier_mode() == VerifierEnvironmentMode.SEPARATE:
        return (
            "separate verifier mode: the verifier's fresh container sees only the agent's artifacts; tracing "
            "it for anchors among them is not built yet"
        )
    if env.config.steps:
        return "multi-step task: each step's verifier is agents/steps.py's; not traced for anchors yet"
    out = Path(result.artifacts_dir or ".") / "probes" / "trust"
    (out / "verifier").mkdir(parents=True, exist_ok=True)
    trace_path = out / "strace-trust.txt"
    sandbox.exec(
        ["bash", "-c", "mkdir -p /logs/verifier && find /logs/verifier -mindepth 1 -delete"], timeout=PROBE_EXEC_SEC
    )
    try:
        session = sandbox.start_trace(trace_path, TRUST_SYSCALLS)
    except NotImplementedError:
        return "the sandbox backend cannot trace syscalls"
    except SandboxError as e:
        return f"strace did not attach: {e}"
    started = time.monotonic()
    try:
        run_verifier(sandbox, env, out)
    finally:
        session.stop()
    log.info("trust.traced", env=env.name, seconds=round(time.monotonic() - started, 2))
    workdir = sandbox.exec(["pwd"], timeout=PROBE_QUICK_EXEC_SEC).stdout.strip()
    uses = traced_uses(
        trace_path.read_text(errors="replace") if trace_path.is_file() else "",
        [workdir] if workdir.startswith("/") else [],
    )
    try:
        changed = {c.path for c in sandbox.changed_paths()}
    except NotImplementedError:
        return "the sandbox backend cannot list changed paths (the oracle's outputs cannot be told apart)"
    cands = sorted(p for p in uses if p not in changed and _candidate(p))
    if not cands:
        return []
    res = sandbox.exec(["bash", "-c", CHECK, "_", *cands[:200]], timeout=PROBE_EXEC_SEC)
    files = [ln.split(" ", 1)[1] for ln in res.stdout.splitlines() if ln.startswith("file ")]
    return [Anchor(path=p, uses=sorted(uses[p][0]), how=uses[p][1]) for p in files]


def _evidence(anchors: list[Anchor]) -> list[str]:
    return [f"{a.path}: {'/'.join(a.uses)} by the verifier (strace: {a.how[:200]})" for a in anchors[:12]]


def trust_findings(ctx, anchors: list[Anchor], oracle: TrialResult | None) -> list[Finding]:
    """Prove the traced anchors with one exploit-trusted-file trial; report what it shows (see the module doc)."""
    if not anchors:
        return []
    evidence = _evidence(anchors)
    if oracle is not None:
        evidence.append(
            f"traced on the end state of {oracle.agent} trial {oracle.trial_id} ({oracle.outcome.value}; "
            "probes/trust/strace-trust.txt)"
        )
    names = ", ".join(a.path for a in anchors[:6])
    actionable = any("executed" in a.uses for a in anchors) or (
        any("read" in a.uses for a in anchors) and re.search(r"(?<![\w.])/[\w.\-/]+\.\w+", ctx.env.instruction)
    )
    trial = None
    if actionable:
        agent = TrustedFile(anchors=[a.model_dump(include={"path", "uses"}) for a in anchors], task=ctx.env.name)
        trial = ctx.trial(agent, purpose="hunt-exploit", trace=ctx.settings.strace)  # the labeller quotes it
        ctx.ran(f"oracle_state/trust/{EXPLOIT}", f"trial {trial.result.trial_id}: {trial.result.outcome.value}")
    else:
        ctx.skip(
            f"oracle_state/trust/{EXPLOIT}",
            "no traced anchor is executed, and the instruction names no output path to copy a read one to",
        )
    if trial is None or trial.result.outcome != Outcome.PASS:
        if trial is not None:
            evidence.append(
                f"{EXPLOIT} trial {trial.result.trial_id} did not earn reward "
                f"({trial.result.outcome.value}): not proven"
            )
        return [
            Finding.of(
                rule="verifier-trusts-agent-file",
                severity=Severity.INFO,
                message=f"the verifier uses files of the agent's image ({names}); a root agent can read and rewrite "
                "them, but copying or rewriting them did not earn reward",
                evidence=evidence,
                location="tests/test.sh",
            )
        ]
    transcript = Path(trial.result.artifacts_dir or "") / "agent" / "transcript.txt"
    acted = transcript.read_text(errors="replace").splitlines()[:30] if transcript.is_file() else []
    proof = [
        f"trial {trial.result.trial_id}: {EXPLOIT} earned reward {trial.result.reward:g}",
        "transcript:\n" + "\n".join(acted),
    ]
    return [
        Finding.of(
            rule=EXPLOIT,
            message=f"a scripted exploit earned reward without doing the task: {EXPLOIT_INFO[EXPLOIT].attack}",
            evidence=proof + evidence,
            location="tests/test.sh",
            trial_ids=[trial.result.trial_id],
        ),
        Finding.of(
            rule="verifier-trusts-agent-file",
            message=f"the verifier trusts files of the agent's image ({names}): the agent copied or rewrote "
            "them and earned reward",
            evidence=evidence + proof[:1],
            location="tests/test.sh",
            trial_ids=[trial.result.trial_id],
        ),
    ]
