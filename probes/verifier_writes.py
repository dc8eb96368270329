"""A verifier that writes what it checks (issue 35, item 5).

A test that compiles into the directory it later lists passes on a clean end state and fails on every later
run: pass, fail, fail. That is not nondeterminism (time, randomness): the verifier mutates the state it checks,
and its check is stricter than the task needs. When re-runs on one end state disagree, the verifier runs once
more between two snapshots of the container's files (the task's area: system directories, scratch space
(/tmp), /logs, /tests and dot-directories under home are left out), under a trace of what it listed, read and
wrote. Paths the verifier wrote (the snapshots differ, or a file is newer than the trial's own verifier phase,
so an earlier verifier run wrote it) that it also reads, or that lie in a directory it lists, are the checked
state it mutates: `verifier-mutates-checked-state` replaces `verifier-nondeterministic`.

A scratch file in /tmp that a test creates exclusively and trips over on the next run (examples/flaky-tests)
is leftover state of the verifier's own, not of the state it checks: it stays `verifier-nondeterministic`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from pathlib import Path

import structlog

from envqa.agents.trial import TrialVerifier
from envqa.core.defaults import (
    PROBE_EXEC_SEC,
    PROBE_QUICK_EXEC_SEC,
    PROBE_SCAN_EXEC_SEC,
)
from envqa.core.defaults import (
    VERIFIER_WRITES_MAX_ENTRIES as MAX_ENTRIES,
)
from envqa.core.environment import Environment
from envqa.core.models import Finding, Phase, TrialResult
from envqa.core.sandbox import Sandbox, SandboxError
from envqa.core.strace import PATH_SYSCALLS, path_uses
from envqa.core.task_model import tests_of

log = structlog.get_logger(__name__)

# Not the checked state: the system, scratch space, qa's own directories, tools' dot-directories under home.
PRUNED = (
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/tmp",
    "/var",
    "/logs",
    "/tests",
    "/solution",
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc",
    "/boot",
    "/root/.*",
    "/home/*/.*",
    "/snap",
)
# The interpreter's and pytest's own caches: written on import, and the import system lists sys.path's
# directories, so a write there says nothing about the checks.
CACHES = re.compile(r"/(__pycache__|\.pytest_cache)(/|$)|\.pyc$")
SNAPSHOT = (
    "find / -xdev \\( "
    + " -o ".join(f"-path {shlex.quote(p)}" for p in PRUNED)
    + " \\) -prune -o -printf '%y %s %T@ %p\\n' 2>/dev/null | head -n "
    + str(MAX_ENTRIES)
)


def snapshot(sandbox: Sandbox) -> dict[str, tuple[str, str, float]] | None:
    """{path: (type, size, mtime)} of the task's area of the container, or None when `find` cannot say."""
    res = sandbox.exec(["sh", "-c", SNAPSHOT], timeout=PROBE_SCAN_EXEC_SEC)
    if res.exit_code not in (0, None) and not res.stdout:
        return None
    entries: dict[str, tuple[str, str, float]] = {}
    for line in res.stdout.splitlines():
        parts = line.split(" ", 3)
        if len(parts) == 4 and parts[3].startswith("/"):
            try:
                entries[parts[3]] = (parts[0], parts[1], float(parts[2]))
            except ValueError:
                continue
    return entries or None


def written_between(before: dict, after: dict, since: float | None) -> set[str]:
    """Paths that appeared, vanished or changed between two snapshots, plus those newer than `since` (the
    trial's verifier phase start: only verifier runs wrote after it)."""
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    if since is not None:
        changed |= {p for p, (_t, _s, mtime) in before.items() if mtime >= since}
    return {p for p in changed if p != "/" and not CACHES.search(p)}


def checked_overlap(written: set[str], events: list[tuple[str, str]]) -> list[str]:
    """Written paths the verifier reads, or whose directory it lists, *before* its own run writes them (so what it
    sees is a leftover of an earlier run), as evidence lines. `events`: (path, use) in trace order, use one of
    listed / read / written. A file a test first writes (runs the program) and then reads is fresh output, not
    state carried over."""
    first_write: dict[str, int] = {}
    for i, (path, use) in enumerate(events):
        if use == "written":
            first_write.setdefault(path, i)
            first_write.setdefault(posixpath.dirname(path), i)  # a directory is written when an entry is
    out = []
    for path in sorted(written):
        before = first_write.get(path, len(events))
        seen = [
            (use, p)
            for p, use in events[:before]
            if use in ("read", "listed") and (p == path or (use == "listed" and p == posixpath.dirname(path)))
        ]
        if ("read", path) in seen:
            out.append(f"{path}: written by the verifier, and read by it before it writes it again")
        elif ("listed", path) in seen:
            out.append(f"{path}: a directory the verifier lists, whose entries it changed")
        elif seen:
            out.append(f"{path}: written by the verifier into {posixpath.dirname(path)}, a directory it lists first")
    return sorted(out, key=lambda line: line.split(":", 1)[0].count("/"), reverse=True)  # files before their dirs


def _uses(sandbox: Sandbox, env: Environment, out: Path, verifier: TrialVerifier) -> list[tuple[str, str]] | str:
    """Run the verifier once under a path trace: (path, use) in order, or why not (a string)."""
    trace_path = out / "strace-writes.txt"
    sandbox.exec(
        ["bash", "-c", "mkdir -p /logs/verifier && find /logs/verifier -mindepth 1 -delete"], timeout=PROBE_EXEC_SEC
    )
    try:
        session = sandbox.start_trace(trace_path, PATH_SYSCALLS)
    except (NotImplementedError, SandboxError) as e:
        return f"no trace: {e}"
    try:
        verifier.run(sandbox, env, out)
    finally:
        session.stop()
    cwd = sandbox.exec(["pwd"], timeout=PROBE_QUICK_EXEC_SEC).stdout.strip() or "/"
    return [
        (u.path, u.use)
        for u in path_uses(trace_path.read_text(errors="replace"), cwd)
        if (u.ok or u.use == "listed") and not CACHES.search(u.path)
    ]


def verifier_text(env: Environment) -> str:
    """The verifier's own files as text (what reads the outputs), at most MAX_TEST_BYTES in all: the test
    model's (core/task_model/verifier_text.py)."""
    return tests_of(env).verifier_text


def _named_in_tests(env: Environment, written: set[str]) -> list[tuple[str, str]]:
    """Without a trace: directories and files the verifier's files name literally stand for what it lists and
    reads (before any write: order is unknown)."""
    text = verifier_text(env)
    dirs = {posixpath.dirname(p) for p in written} | written
    return [(d, "listed") for d in sorted(dirs) if len(d) > 1 and d in text] + [
        (p, "read") for p in sorted(written) if p in text
    ]


def mutates_checked_state(
    sandbox: Sandbox, env: Environment, result: TrialResult, verdicts: list[str], out: Path, verifier: TrialVerifier
) -> Finding | None:
    """After re-runs disagreed: `verifier-mutates-checked-state` when the verifier writes into what it checks."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "verifier").mkdir(exist_ok=True)
    before = snapshot(sandbox)
    if before is None:
        return None
    traced = _uses(sandbox, env, out, verifier)
    after = snapshot(sandbox) or {}
    window = next((t for t in result.timings if t.phase == Phase.VERIFIER), None)
    written = written_between(before, after, window.started_at.timestamp() if window else None)
    events = traced if not isinstance(traced, str) else _named_in_tests(env, written)
    lines = checked_overlap(written, events)
    log.info(
        "verifier_writes.checked",
        written=len(written),
        events=len(events),
        overlap=len(lines),
        traced=not isinstance(traced, str),
    )
    if not lines:
        return None
    how = "traced" if not isinstance(traced, str) else f"named in the tests ({traced})"
    return Finding.of(
        rule="verifier-mutates-checked-state",
        message=(
            "the verifier writes into the state it checks, so its verdicts on one end state change from run "
            f"to run ({', '.join(verdicts)}): a check stricter than the task needs meets the verifier's own "
            "leftovers"
        ),
        evidence=[
            f"trial {result.trial_id}: verdicts of {len(verdicts)} verifier runs on the oracle's end state: {verdicts}",
            f"container diff around one more verifier run ({how}), trace in {out}",
        ]
        + lines[:12],
        location="tests/",
        trial_ids=[result.trial_id],
    )
