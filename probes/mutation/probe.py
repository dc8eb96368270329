"""Verifier mutation testing on the oracle's end state.

The files the oracle created or changed (the container's diff against its image) are mutated one at a
time: deleted, emptied, cut short, a number perturbed, a program replaced by a stub that does nothing.
Each mutant is restored after the verifier has judged it. Only files the verifier demonstrably
checks (deleting them makes it fail) are mutated further, so a log file the tests rightly ignore
never raises an alarm; a verifier that still passes a mutant of a checked file is too permissive.

Code or data is decided by content (probes/mutation/kinds.py), not by the file's name: a regular expression
kept in a `.txt` answer file is code, and code gets no "changed constant" or "dropped line" mutants (those
are often equivalent). A surviving mutant of code is a `warning` (it may be an equivalent mutant), unless the
file is an output the instruction names: then the mutant changed the task's stated output and it stays an
`error`, like any surviving mutant of data.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import structlog

from envqa.agents.trial import TrialVerifier
from envqa.core.defaults import (
    MUTATION_MAX_BYTES as MAX_BYTES,
)
from envqa.core.defaults import (
    MUTATION_MAX_CANDIDATES as MAX_CANDIDATES,
)
from envqa.core.defaults import (
    PROBE_EXEC_SEC,
    PROBE_QUICK_EXEC_SEC,
)
from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity, TrialResult
from envqa.core.sandbox import Sandbox
from envqa.probes.flakiness import verdict_on_state
from envqa.probes.mutation.kinds import code_kind, output_rank, stated_in, traced_code
from envqa.probes.mutation.tolerance import FileVerdicts, every_record_changed, records, verifier_thresholds
from envqa.probes.verifier_writes import verifier_text

log = structlog.get_logger(__name__)

IGNORED_PREFIXES = (
    "/tests",
    "/solution",
    "/logs",
    "/tmp",
    "/var/tmp",
    "/root/.cache",
    "/proc",
    "/dev",
    "/run",
    "/var/cache",
    "/var/log",
    "/var/lib/apt",
    "/var/lib/dpkg",
    "/etc/ld.so.cache",
    "/root/.bash_history",
)
NUMBER = re.compile(rb"\d+")


@dataclass
class Mutant:
    path: str
    kind: str
    data: bytes | None  # None: delete the file
    # "whole": a wholly wrong answer (emptied, replaced, every record changed); "record": one record wrong.
    # A verifier that passes only "record" mutants may tolerate partial answers by design (mutation_tolerance).
    scope: str = "whole"
    optional: bool = False  # tried only while the file's verdicts still look like tolerance


def output_files(sandbox: Sandbox, limit: int, instruction: str = "") -> list[str]:
    """Regular files the agent phase (and verifier) added or changed, our own directories excluded, at most `limit`.

    Filtered first, then ranked, then cut: the files the instruction names come first, then the task's own
    files, then what package managers and caches left under system directories; by path within each rank.
    So the real output is never cut off by a pip install's files, and two runs mutate the same files."""
    try:
        changes = sandbox.changed_paths()
    except NotImplementedError:
        return []
    except Exception as e:  # noqa: BLE001 - the backend cannot say: mutation testing is skipped, not failed
        log.warning("mutation.diff_failed", error=str(e))
        return []
    paths = sorted(
        {
            c.path
            for c in changes
            if c.kind in ("changed", "added")
            and not c.path.startswith(IGNORED_PREFIXES)
            and "__pycache__" not in c.path
            and not c.path.endswith((".pyc", "/conftest.py"))
        },
        key=lambda p: output_rank(p, instruction),
    )[:MAX_CANDIDATES]
    if not paths:
        return []
    res = sandbox.exec(
        [
            "bash",
            "-c",
            "for p in "
            + " ".join(shlex.quote(p) for p in paths)
            + '; do [ -f "$p" ] && [ ! -L "$p" ] && [ $(stat -c %s "$p") -le '
            + str(MAX_BYTES)
            + ' ] && echo "$p"; done; true',
        ],
        timeout=PROBE_EXEC_SEC,
    )
    files = {p for p in res.stdout.splitlines() if p}
    return [p for p in paths if p in files][:limit]


def mutants_of(path: str, data: bytes, executable: bool, code=...) -> list[Mutant]:
    """The mutants of one checked file. `code`: what kind of code it is (mutation_kinds.code_kind), None for
    data; decided from the content when not given."""
    if code is ...:
        code = code_kind(path, data, executable)
    if executable:  # an emptied program fails to start; a stub that runs and does nothing is the real test
        return [Mutant(path, "stub program (exits 0, prints nothing)", b"#!/bin/sh\nexit 0\n")]
    out = [Mutant(path, "empty", b"")]
    if b"\0" in data[:4096] or code is not None:
        return out  # code: a changed constant or a dropped last line is often an equivalent mutant
    lines = data.splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    several = records(data) >= 2  # with one record, changing it is changing every record
    if several:
        out.append(Mutant(path, "every record changed", every_record_changed(data)))
    if len(lines) >= 2:
        out.append(Mutant(path, "last line removed", b"".join(lines[:-1]), scope="record" if several else "whole"))
    m = NUMBER.search(data)
    if m:
        bumped = str(int(m.group()) + 1).encode()
        out.append(
            Mutant(
                path,
                f"number {m.group().decode()} -> {bumped.decode()}",
                data[: m.start()] + bumped + data[m.end() :],
                scope="record" if several else "whole",
            )
        )
    if records(data) >= 3:  # a middle record too: a verifier checking only some records is not tolerant
        middle = records(data) // 2
        out.append(
            Mutant(
                path,
                f"record {middle + 1} changed",
                every_record_changed(data, only=middle),
                scope="record",
                optional=True,
            )
        )
    return out


def _apply(sandbox: Sandbox, mutant: Mutant, mode: int) -> None:
    if mutant.data is None:
        sandbox.exec(["rm", "-f", mutant.path], timeout=PROBE_QUICK_EXEC_SEC)
    else:
        sandbox.write_file(mutant.path, mutant.data, mode)


@dataclass
class _Survivor:
    path: str
    line: str  # the evidence line
    serious: bool  # data, or an output the instruction names


def _judge_file(
    sandbox: Sandbox,
    env: Environment,
    path: str,
    tests: str,
    traced: set[str],
    out_dir,
    threshold: float,
    verifier: TrialVerifier,
) -> tuple[FileVerdicts, list[_Survivor], int] | None:
    """Mutate one output file, one mutant at a time, restoring it after each verdict: (verdicts by scope,
    surviving mutants, mutants tried), or None when the file is gone."""
    try:
        data = sandbox.read_file(path, MAX_BYTES)
    except (FileNotFoundError, IsADirectoryError):
        return None
    st = sandbox.exec(["stat", "-c", "%a", path], timeout=PROBE_QUICK_EXEC_SEC).stdout.strip() or "644"
    mode = int(st, 8)
    executable = bool(mode & 0o111)
    code = code_kind(path, data, executable, tests, traced)
    serious = code is None or stated_in(path, env.instruction)
    judged, survivors, tried = FileVerdicts(path), [], 0
    for mutant in [Mutant(path, "deleted", None)] + mutants_of(path, data, executable, code):
        if mutant.optional and not judged.tolerant():
            continue  # the file's verdicts already rule tolerance out (or in a wholly wrong mutant passed)
        _apply(sandbox, mutant, mode)
        verdict = verdict_on_state(sandbox, env, out_dir(), threshold, verifier)
        tried += 1
        sandbox.write_file(path, data, mode)  # restore before anything else looks
        if mutant.data is None:
            if verdict != "fail":
                break  # deleting it does not matter: the verifier does not check this file
            continue
        (judged.whole if mutant.scope == "whole" else judged.record).append((mutant.kind, verdict))
        if verdict == "pass":
            what = (
                ""
                if code is None
                else f" (code: {code}" + (")" if serious else "; not an output the instruction names)")
            )
            survivors.append(_Survivor(path, f"{path}: {mutant.kind} -> verifier still passes{what}", serious))
    log.info("mutation.file", path=path, code=code, whole=judged.whole, record=judged.record)
    return judged, survivors, tried


def mutation_findings(
    sandbox: Sandbox, env: Environment, result: TrialResult, limit: int, threshold: float, verifier: TrialVerifier
) -> list[Finding]:
    files = output_files(sandbox, limit, env.instruction)
    tests = verifier_text(env)
    traced = traced_code(result.artifacts_dir)  # what the verifier executed or imported, when it was traced
    base = Path(result.artifacts_dir or ".") / "probes"
    count = iter(range(1, 1_000_000))
    judged: list[FileVerdicts] = []
    survivors: list[_Survivor] = []
    tried = 0
    for path in files:
        out = _judge_file(
            sandbox, env, path, tests, traced, lambda: base / f"mutant-{next(count)}", threshold, verifier
        )
        if out is not None:
            judged.append(out[0])
            survivors += out[1]
            tried += out[2]
    if not survivors:
        return []
    thresholds = verifier_thresholds(env)
    # Tolerant: wholly wrong mutants fail and one-record mutants pass, either all of them (seen dynamically) or
    # some of them where the tests' code scores the records against a threshold (seen statically).
    tolerant = {j.path for j in judged if j.tolerant() or (thresholds and j.only_partial())}
    wrong = [s for s in survivors if s.path not in tolerant]
    head = f"trial {result.trial_id} (oracle end state), {tried} mutants of {len(files)} output file(s)"
    found = [_accepts_mutant(result, head, wrong)] if wrong else []
    if tolerant:
        found.append(_tolerates(result, head, [j for j in judged if j.path in tolerant], thresholds))
    return found


def _accepts_mutant(result: TrialResult, head: str, survivors: list[_Survivor]) -> Finding:
    serious = any(s.serious for s in survivors)
    return Finding.of(
        rule="verifier-accepts-mutant",
        severity=Severity.ERROR if serious else Severity.WARNING,
        message=f"the verifier passed {len(survivors)} mutant(s) of the oracle's outputs: "
        + (
            "it does not check what the task asks for, so wrong work earns reward"
            if serious
            else "all of them in code the instruction does not name as an output, so they may be equivalent "
            "mutants; check whether the tests exercise that code"
        ),
        evidence=[head] + [s.line for s in survivors][:12],
        location="tests/",
        trial_ids=[result.trial_id],
    )


def _tolerates(result: TrialResult, head: str, files: list[FileVerdicts], thresholds: list[str]) -> Finding:
    stated = "; ".join(t.split(": ", 1)[-1] for t in thresholds[:3])
    return Finding.of(
        rule="verifier-tolerates-partial-answer",
        message="the verifier scores the answer record by record and passes above a threshold"
        + (f" ({stated})" if stated else " (seen from the mutants: not stated in the tests' Python code)")
        + ": a partly wrong answer earns reward, a wholly wrong one does not",
        evidence=[head]
        + [f"threshold in {t}" for t in thresholds[:4]]
        + [
            f"{j.path}: one record wrong -> {', '.join(f'{k}: {v}' for k, v in j.record)}; wholly wrong -> "
            f"{', '.join(f'{k}: {v}' for k, v in j.whole)}"
            for j in files[:6]
        ],
        location=thresholds[0].split(":", 1)[0] if thresholds else "tests/",
        trial_ids=[result.trial_id],
    )
