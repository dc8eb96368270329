"""Why the nop passes: the `nop_cause` probe (issue 35, item 4).

Validation says `nop-passes`; this probe says why. One more nop trial keeps its end state; there the verifier
runs again under a path trace (core/strace.py PATH_SYSCALLS: what it listed, read, ran) with pytest's JUnit
report switched on through PYTEST_ADDOPTS (per-test pass/fail, whatever flags test.sh passes). The facts of
that state (listed directories' entry counts, programs it failed to run, digests of the files it read that the
nop left as the image ships them) and the tests' AST name the cause (probes/nop/cause_rules.py). The finding is
`nop-passes` again, now with the cause as its subtype and the evidence: it supersedes validation's unexplained
one (graphs/loop_state.py). Nothing is reported when no cause is shown (a reward-writing flaw, say, is its own
rule's to report).
"""

from __future__ import annotations

from pathlib import Path

import structlog

from envqa.agents.trial import run_verifier
from envqa.core.defaults import (
    NOP_MAX_DIGEST_BYTES as MAX_DIGEST_BYTES,
)
from envqa.core.defaults import (
    NOP_MAX_DIGEST_FILES as MAX_DIGEST_FILES,
)
from envqa.core.defaults import (
    NOP_MAX_REPORT_BYTES as MAX_REPORT_BYTES,
)
from envqa.core.defaults import (
    PROBE_EXEC_SEC,
    PROBE_QUICK_EXEC_SEC,
    PROBE_SCAN_EXEC_SEC,
)
from envqa.core.environment import Environment
from envqa.core.models import Finding, Outcome, TrialResult
from envqa.core.sandbox import Sandbox, SandboxError
from envqa.core.strace import PATH_SYSCALLS, PathUse, path_uses
from envqa.core.task_config import VerifierEnvironmentMode
from envqa.core.task_model import tests_of
from envqa.probes.base import ProbeContext, register_probe
from envqa.probes.nop.cause_rules import NopFacts, explain, junit_results

log = structlog.get_logger(__name__)

JUNIT = "/logs/verifier/envqa-nop-junit.xml"
SYSTEM = (
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/usr/",
    "/lib",
    "/bin/",
    "/sbin/",
    "/etc/",
    "/var/lib/",
    "/var/cache/",
    "/logs/",
    "/tmp/pytest-",
    "/root/.cache/",
)
DIGESTS = ("md5", "sha1", "sha256", "sha512")


def _user_path(path: str) -> bool:
    return (
        path.startswith("/")
        and not path.startswith(SYSTEM)
        and "/__pycache__/" not in path
        and not path.endswith((".pyc", ".so"))
    )


def _with_junit(env: Environment) -> Environment:
    """The environment with PYTEST_ADDOPTS asking every pytest the verifier runs for a JUnit report."""
    venv = dict(env.config.verifier.env)
    venv["PYTEST_ADDOPTS"] = (venv.get("PYTEST_ADDOPTS", "") + f" --junitxml={JUNIT}").strip()
    verifier = env.config.verifier.model_copy(update={"env": venv})
    return env.model_copy(update={"config": env.config.model_copy(update={"verifier": verifier})})


def _listed(sandbox: Sandbox, uses: list[PathUse]) -> dict[str, int]:
    dirs = sorted({u.path for u in uses if u.use == "listed" and _user_path(u.path + "/")})[:50]
    if not dirs:
        return {}
    script = 'for d in "$@"; do if [ -d "$d" ]; then echo "$(ls -A "$d" | wc -l) $d"; else echo "-1 $d"; fi; done'
    res = sandbox.exec(["sh", "-c", script, "sh", *dirs], timeout=PROBE_EXEC_SEC)
    out = {}
    for line in res.stdout.splitlines():
        count, _, path = line.partition(" ")
        if path and count.lstrip("-").isdigit():
            out[path] = int(count)
    return out


def _missing(sandbox: Sandbox, uses: list[PathUse]) -> dict[str, str]:
    """Programs the verifier tried to run that exist nowhere (not at that path, not on PATH)."""
    tried = {u.path: u.line for u in uses if u.use == "executed" and not u.ok and u.error == "ENOENT"}
    if not tried:
        return {}
    script = 'for p in "$@"; do [ -e "$p" ] || command -v "$(basename "$p")" >/dev/null 2>&1 || echo "$p"; done'
    res = sandbox.exec(["sh", "-c", script, "sh", *sorted(tried)[:50]], timeout=PROBE_EXEC_SEC)
    return {p: tried[p] for p in res.stdout.splitlines() if p in tried}


def _digests(sandbox: Sandbox, uses: list[PathUse]) -> dict[str, dict[str, str]]:
    """Digests of the regular files the verifier read that the nop left as the image ships them."""
    try:
        touched = {c.path for c in sandbox.changed_paths() if c.kind in ("changed", "added")}
    except (NotImplementedError, SandboxError):
        touched = set()
    reads = sorted(
        {
            u.path
            for u in uses
            if u.use == "read" and u.ok and _user_path(u.path) and not u.path.endswith(".py") and u.path not in touched
        }
    )[:MAX_DIGEST_FILES]
    if not reads:
        return {}
    script = (
        'for f in "$@"; do [ -f "$f" ] && [ ! -L "$f" ] && [ "$(stat -c %s "$f")" -le '
        + str(MAX_DIGEST_BYTES)
        + ' ] || continue; echo "$(md5sum < "$f" | cut -d" " -f1) '
        '$(sha1sum < "$f" | cut -d" " -f1) $(sha256sum < "$f" | cut -d" " -f1) '
        '$(sha512sum < "$f" | cut -d" " -f1) $f"; done'
    )
    res = sandbox.exec(["sh", "-c", script, "sh", *reads], timeout=PROBE_SCAN_EXEC_SEC)
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split(" ", 4)
        if len(parts) == 5:
            out[parts[4]] = dict(zip(DIGESTS, parts[:4]))
    return out


def nop_facts(sandbox: Sandbox, env: Environment, out: Path) -> NopFacts | str:
    """Rerun the verifier on this (nop) end state, traced and with a per-test report: the facts, or why not."""
    (out / "verifier").mkdir(parents=True, exist_ok=True)
    sandbox.exec(
        ["bash", "-c", "mkdir -p /logs/verifier && find /logs/verifier -mindepth 1 -delete"], timeout=PROBE_EXEC_SEC
    )
    trace_path = out / "strace-nop.txt"
    try:
        session = sandbox.start_trace(trace_path, PATH_SYSCALLS)
    except NotImplementedError:
        return "the sandbox backend cannot trace syscalls"
    except SandboxError as e:
        return f"strace did not attach: {e}"
    try:
        run_verifier(sandbox, _with_junit(env), out)
    finally:
        session.stop()
    cwd = sandbox.exec(["pwd"], timeout=PROBE_QUICK_EXEC_SEC).stdout.strip() or "/"
    uses = path_uses(trace_path.read_text(errors="replace"), cwd)
    facts = NopFacts(
        listed=_listed(sandbox, uses), missing_programs=_missing(sandbox, uses), digests=_digests(sandbox, uses)
    )
    report = out / "verifier" / Path(JUNIT).name
    if report.is_file() and report.stat().st_size <= MAX_REPORT_BYTES:
        results = junit_results(report.read_text(errors="replace"))
        if results is not None:
            facts.passed, facts.failed = results
    return facts


def nop_cause_finding(facts: NopFacts, env: Environment, nop: list[TrialResult], result: TrialResult) -> Finding | None:
    cause = explain(tests_of(env).vacuity, facts)
    if cause is None:
        return None
    reward = nop[0].reward if nop and nop[0].reward is not None else result.reward or 0.0
    return Finding.of(
        rule="nop-passes",
        subtype=cause.subtype,
        message=f"nop earned reward {reward:g}: {cause.summary}",
        evidence=[f"trial {result.trial_id}: the verifier rerun on the nop's end state under strace"] + cause.evidence,
        location=cause.location,
        trial_ids=[t.trial_id for t in nop] + [result.trial_id],
    )


@register_probe("nop_cause")
def nop_cause_probe(ctx: ProbeContext) -> list[Finding]:
    nop = ctx.passed("nop")
    if not nop:
        ctx.skip("nop_cause", "the nop does not pass: nothing to explain")
        return []
    if not ctx.settings.strace:
        ctx.skip("nop_cause", "tracing is off ([probes] strace = false): the cause is read from a trace")
        return []
    if ctx.env.config.verifier_mode() == VerifierEnvironmentMode.SEPARATE or ctx.env.config.steps:
        ctx.skip("nop_cause", "separate verifier or multi-step task: the nop's end state is not traced there yet")
        return []
    found: list[Finding] = []

    def on_state(sandbox: Sandbox, result: TrialResult) -> None:
        if result.outcome != Outcome.PASS:
            ctx.skip("nop_cause", f"the probe's nop run {result.trial_id} did not pass this time: nothing to explain")
            return
        facts = nop_facts(sandbox, ctx.env, Path(result.artifacts_dir or ".") / "probes" / "nop-cause")
        if isinstance(facts, str):
            ctx.skip("nop_cause", facts)
            return
        finding = nop_cause_finding(facts, ctx.env, nop, result)
        log.info(
            "nop_cause.explained",
            subtype=finding.subtype if finding else None,
            listed=facts.listed,
            missing=list(facts.missing_programs),
            passed=facts.passed,
        )
        if finding is None:
            ctx.ran(
                "nop_cause",
                "no cause among the known shapes (empty output loop, shipped hash, unchecked "
                "missing program, untouched files compared)",
            )
        else:
            found.append(finding)
            ctx.ran("nop_cause", f"cause: {finding.subtype}")

    ctx.trial("nop", purpose="hunt-nop-cause", keep=on_state)
    return found
