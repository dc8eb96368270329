"""Verifier mutation testing on the oracle's end state.

The files the oracle created or changed (the container's diff against its image) are mutated one at a
time: deleted, emptied, cut short, a number perturbed, a program replaced by a stub that does nothing.
Each mutant is restored after the verifier has judged it. Only files the verifier demonstrably
checks (deleting them makes it fail) are mutated further, so a log file the tests rightly ignore
never raises an alarm; a verifier that still passes a mutant of a checked file is too permissive.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import structlog

from envqa.core.environment import Environment
from envqa.core.models import Finding, Label, Severity, TrialResult
from envqa.probes.flakiness import verdict_on_state
from envqa.core.sandbox import Sandbox

log = structlog.get_logger(__name__)

IGNORED_PREFIXES = ("/tests", "/solution", "/logs", "/tmp", "/var/tmp", "/root/.cache", "/proc", "/dev", "/run",
                    "/var/cache", "/var/log", "/var/lib/apt", "/var/lib/dpkg", "/etc/ld.so.cache", "/root/.bash_history")
MAX_BYTES = 1024 * 1024
NUMBER = re.compile(rb"\d+")
CODE_SUFFIXES = (".py", ".c", ".h", ".cc", ".cpp", ".hpp", ".rs", ".go", ".js", ".ts", ".java", ".rb", ".pl", ".sh",
                 ".lua", ".php", ".cs", ".kt", ".swift", ".scala", ".hs", ".ml", ".s", ".asm", ".sql", ".r")


@dataclass
class Mutant:
    path: str
    kind: str
    data: bytes | None  # None: delete the file


def output_files(sandbox: Sandbox, limit: int) -> list[str]:
    """Regular files the agent phase (and verifier) added or changed, our own directories excluded."""
    try:
        changes = sandbox.changed_paths()
    except NotImplementedError:
        return []
    except Exception as e:  # the backend cannot say: mutation testing is skipped, not failed
        log.warning("mutation.diff_failed", error=str(e))
        return []
    paths = [c.path for c in changes if c.kind in ("changed", "added")
             and not c.path.startswith(IGNORED_PREFIXES) and "__pycache__" not in c.path
             and not c.path.endswith((".pyc", "/conftest.py"))]
    if not paths:
        return []
    res = sandbox.exec(["bash", "-c", "for p in " + " ".join(shlex.quote(p) for p in paths)
                        + '; do [ -f "$p" ] && [ ! -L "$p" ] && [ $(stat -c %s "$p") -le ' + str(MAX_BYTES)
                        + ' ] && echo "$p"; done; true'], timeout=60)
    return [p for p in res.stdout.splitlines() if p][:limit]


def mutants_of(path: str, data: bytes, executable: bool) -> list[Mutant]:
    if executable:  # an emptied program fails to start; a stub that runs and does nothing is the real test
        return [Mutant(path, "stub program (exits 0, prints nothing)", b"#!/bin/sh\nexit 0\n")]
    out = [Mutant(path, "empty", b"")]
    if b"\0" in data[:4096] or data.startswith(b"#!") or path.endswith(CODE_SUFFIXES):
        return out  # code: a changed constant or a dropped last line is often an equivalent mutant
    lines = data.splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) >= 2:
        out.append(Mutant(path, "last line removed", b"".join(lines[:-1])))
    m = NUMBER.search(data)
    if m:
        bumped = str(int(m.group()) + 1).encode()
        out.append(Mutant(path, f"number {m.group().decode()} -> {bumped.decode()}",
                          data[: m.start()] + bumped + data[m.end():]))
    return out


def _apply(sandbox: Sandbox, mutant: Mutant, mode: int) -> None:
    if mutant.data is None:
        sandbox.exec(["rm", "-f", mutant.path], timeout=30)
    else:
        sandbox.write_file(mutant.path, mutant.data, mode)


def mutation_findings(sandbox: Sandbox, env: Environment, result: TrialResult, limit: int,
                      threshold: float) -> list[Finding]:
    files = output_files(sandbox, limit)
    base = Path(result.artifacts_dir or ".") / "probes"
    survivors: list[str] = []
    tried = 0
    for path in files:
        try:
            data = sandbox.read_file(path, MAX_BYTES)
        except (FileNotFoundError, IsADirectoryError):
            continue
        st = sandbox.exec(["stat", "-c", "%a", path], timeout=30).stdout.strip() or "644"
        mode = int(st, 8)
        verdicts = []
        for mutant in [Mutant(path, "deleted", None)] + mutants_of(path, data, bool(mode & 0o111)):
            _apply(sandbox, mutant, mode)
            tried += 1
            verdict = verdict_on_state(sandbox, env, base / f"mutant-{tried}", threshold)
            sandbox.write_file(path, data, mode)  # restore before anything else looks
            verdicts.append((mutant.kind, verdict))
            if mutant.data is None and verdict != "fail":
                break  # deleting it does not matter: the verifier does not check this file
            if verdict == "pass":
                survivors.append(f"{path}: {mutant.kind} -> verifier still passes")
        log.info("mutation.file", path=path, verdicts=verdicts)
    if not survivors:
        return []
    return [Finding(
        rule="verifier-accepts-mutant", label=Label.SHORTCUT, severity=Severity.ERROR,
        message=f"the verifier passed {len(survivors)} mutant(s) of the oracle's outputs: it does not check "
                "what the task asks for, so wrong work earns reward",
        evidence=[f"trial {result.trial_id} (oracle end state), {tried} mutants of {len(files)} output file(s)"]
        + survivors[:12],
        location="tests/", trial_ids=[result.trial_id],
        fix="compare the outputs' full content (every line, every number) with the expected values",
    )]
