"""Why the nop passes (issue 35, item 4): the cause, named from the verifier's own behaviour on the nop's end state.

`nop-passes` says that an agent doing nothing earns reward; a fixer or a person can act only on why. The
probe (probes/nop/cause.py) reruns the verifier on the nop's end state under a path trace, with pytest's
per-test report, and gathers facts about that state (`NopFacts`). This module holds the pure part: the shape
of each test function, read from the test model (core/task_model/vacuity.py), and the cause a passing test and the facts
agree on (`explain`). Four causes, as `nop-passes` subtypes:

- `empty-output-loop`: a test loops over a directory listing, and the directory is empty (or missing) in the
  nop's end state, so the loop's asserts never run;
- `hash-matches-shipped-file`: a digest the tests hold already matches a file the verifier read and the nop
  left as the image ships it;
- `unchecked-missing-program`: the verifier ran a program that does not exist, from a test that never looks
  at the exit status;
- `compares-untouched-files`: a test compares two files the agent never touched, and they are already equal.

No cause is guessed: without a passing test whose code and the facts agree, nothing is named.
"""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ET  # (pytest's own report from the sandbox, size-capped by the caller)
from dataclasses import dataclass, field

from envqa.core.task_model.vacuity import ShapeOfTest


@dataclass
class NopFacts:
    """The nop's end state as the rerun saw it."""

    listed: dict[str, int] = field(default_factory=dict)  # directory the verifier listed -> entries (-1: missing)
    missing_programs: dict[str, str] = field(default_factory=dict)  # program it failed to run -> trace line
    digests: dict[str, dict[str, str]] = field(default_factory=dict)  # untouched file it read -> {algo: hex}
    passed: list[str] | None = None  # test names pytest reported passed (None: no per-test report)
    failed: list[str] = field(default_factory=list)


@dataclass
class Cause:
    subtype: str
    summary: str
    evidence: list[str]
    location: str


def junit_results(xml_text: str) -> tuple[list[str], list[str]] | None:
    """(passed, failed) test names from pytest's JUnit XML (`--junitxml`), parameters stripped."""
    try:
        root = ET.fromstring(xml_text)  # noqa: S314
    except ET.ParseError:
        return None
    passed, failed = [], []
    for case in root.iter("testcase"):
        name = (case.get("name") or "").split("[", 1)[0]
        bad = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        if bad:
            failed.append(name)
        elif not skipped:
            passed.append(name)
    return passed, failed


def _empty_loop(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    out = []
    empty = {d: n for d, n in facts.listed.items() if n <= 0}
    for line, code, where in shape.loops:
        hits = [where] if where in empty else ([] if where else sorted(empty))
        for d in hits:
            state = "missing" if empty[d] < 0 else "empty"
            out.append(
                f"{shape.file}:{line} {shape.name} loops over {code}; {d} is {state} in the nop's end state, "
                "so the loop's asserts never ran"
            )
    return out


def _hash_match(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    return [
        f"{shape.file}:{shape.line} {shape.name} expects {algo} {digest[:16]}...; {path} already has it, as the "
        "image ships it (the nop did not touch it)"
        for path, sums in sorted(facts.digests.items())
        for algo, digest in sums.items()
        if digest in shape.digests
    ]


def _missing_program(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    if not shape.unchecked_runs:
        return []
    names = {posixpath.basename(p): (p, line) for p, line in facts.missing_programs.items()}
    out = []
    for name, (_path, trace) in sorted(names.items()):
        if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", shape.text):
            line, call = shape.unchecked_runs[0]
            out.append(
                f"{shape.file}:{line} {shape.name} runs {call} and never reads its exit status; "
                f"{name} does not exist in the nop's end state (strace: {trace[:160]})"
            )
    return out


def _untouched_pair(shape: ShapeOfTest, facts: NopFacts) -> list[str]:
    if not shape.compares:
        return []
    named = [
        p
        for p in facts.digests
        if p in shape.text or re.search(r"(?<![\w.-])" + re.escape(posixpath.basename(p)) + r"(?![\w-])", shape.text)
    ]
    by_sum: dict[str, list[str]] = {}
    for path in named:
        by_sum.setdefault(facts.digests[path].get("sha256", ""), []).append(path)
    return [
        f"{shape.file}:{shape.line} {shape.name} compares {a} with {b}; neither was touched by the nop "
        "(both as the image ships them) and they are already identical"
        for digest, paths in sorted(by_sum.items())
        if digest and len(paths) >= 2
        for a, b in [paths[:2]]
    ]


CAUSES = (  # subtype, rule over one test, summary (the remedy of each subtype: nop-passes in rules.toml)
    (
        "hash-matches-shipped-file",
        _hash_match,
        "a digest the tests expect already matches a file the image ships",
    ),
    (
        "compares-untouched-files",
        _untouched_pair,
        "a test compares two files the agent never touches, and they are already equal",
    ),
    (
        "empty-output-loop",
        _empty_loop,
        "a test loops over an output directory that is empty, so its asserts never run",
    ),
    (
        "unchecked-missing-program",
        _missing_program,
        "a test runs a program that does not exist and never checks its exit status",
    ),
)


def explain(shapes: list[ShapeOfTest], facts: NopFacts) -> Cause | None:
    """The first cause (in CAUSES order) that a test which passed on the nop's end state shows; evidence from
    every cause that applies."""
    passing = [s for s in shapes if facts.passed is None or s.name in facts.passed]
    found: list[tuple[str, str, list[str]]] = []
    for subtype, rule, summary in CAUSES:
        lines = [line for shape in passing for line in rule(shape, facts)]
        if lines:
            found.append((subtype, summary, lines))
    if not found:
        return None
    subtype, summary, _lines = found[0]
    evidence = [line for *_rest, lines in found for line in lines][:12]
    location = evidence[0].split(":", 1)[0] if evidence else "tests/"
    if facts.passed is not None:
        evidence.append(
            f"pytest on the nop's end state: passed {', '.join(facts.passed[:8]) or 'none'}"
            + (f"; failed {', '.join(facts.failed[:8])}" if facts.failed else "")
        )
    return Cause(subtype, summary, evidence, location)
