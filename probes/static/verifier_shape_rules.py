"""What the verifier's checks compare against, read from its files (pytest modules through `ast`, test.sh
through the bash parser): a few literals, or only file names.

  verifier-literal-only            every value check compares the output with at most 3 literals and nothing
                                   is computed from an input. Severity by what hard-coding costs:
                                   error: the expected literal is in the agent's image (a Dockerfile `echo`, a
                                   file whose content or line it is; literals of 12+ characters are left to
                                   test-literals-in-image, which looks in the built image);
                                   warning: the agent's program runs on a fixed input and one value is
                                   expected (a program that prints that constant passes);
                                   info: several values are expected (a lookup table passes).
                                   Nothing when the instruction shows that very example (files alone cannot
                                   tell "print this" from "compute this": examples/always-pass), nor for an
                                   answer file checked against its value with no input: that is how
                                   "compute X" tasks are verified (examples/tb1-clean).
  verifier-checks-only-file-names  (warning) the only checks are that files with some names exist: `touch`
                                   passes.
  answer-in-file-name              (warning) an expected literal is a token in the name of a file the agent's
                                   image gets (labels in input file names: `img_03_cat.png` for "cat").

The checks come from the test model, core/task_model/checks.py (pytest modules through `ast`, test.sh through the bash parser).
"""

from __future__ import annotations

import re
from itertools import islice
from pathlib import Path

from envqa.core.defaults import VERIFIER_SHAPE_MAX_LITERALS as MAX_LITERALS
from envqa.core.defaults import VERIFIER_SHAPE_MAX_WALK as MAX_WALK
from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.parsers.dockerfile import parse_dockerfile
from envqa.core.task_model import tests_of
from envqa.core.task_model.checks import GENERIC, Shape
from envqa.probes.static.image_checks import MIN_LITERAL
from envqa.probes.static.task_files import rel as _rel


def _agent_files(env: Environment) -> list[Path]:
    """Files the agent's image can get from the task: the build context, minus tests, solution and task files."""
    skip = {c.source.resolve() for c in env.tests + env.solution}
    out = []
    for p in sorted(islice(env.build_context.rglob("*"), MAX_WALK)):  # a data-heavy context stays cheap
        r = p.resolve()
        if not p.is_file() or r in skip or any(s in r.parents for s in skip):
            continue
        if p.name in ("task.toml", "task.yaml", "instruction.md", "qa-expected.json", "run-tests.sh", "solution.sh"):
            continue
        out.append(p)
    return out[:500]


def in_text(value: str, text: str) -> bool:
    """Whether a literal is stated in a text: in a code span, alone on a line, or (4+ chars) as a whole word."""
    v = value.strip()
    if not v:
        return False
    if f"`{v}`" in text or any(line.strip().strip("`'\"") == v for line in text.splitlines()):
        return True
    return len(v) >= 4 and re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", text) is not None


def visible_where(env: Environment, value: str) -> str | None:
    """Where the agent can read an expected literal before it acts: the instruction or a file of its image."""
    if in_text(value, env.instruction):
        return "instruction.md"
    if len(value.strip()) >= MIN_LITERAL:
        return None  # test-literals-in-image looks for it in the built image: one flaw, one rule
    for p in _agent_files(env):
        if p == env.dockerfile:
            for _stage, cmd in parse_dockerfile(p).run_commands():
                if cmd.name in ("echo", "printf") and value.strip() in [x.strip() for x in cmd.words[1:]]:
                    return cmd.evidence(_rel(env, p))
            continue
        try:
            text = p.read_bytes()[:200_000].decode()
        except (OSError, UnicodeDecodeError):
            continue
        v = value.strip()
        if text.strip() == v or (len(v) >= 6 and any(ln.strip() == v for ln in text.splitlines())):
            return _rel(env, p)  # short values must be the whole file or line: "42" is in any data file
    return None


def literal_only_rules(env: Environment, shape: Shape) -> list[Finding]:
    lits = shape.literals
    if not lits or shape.computed or len(lits) > MAX_LITERALS:
        return []
    shown = {v: visible_where(env, v) for v in lits}
    stated = {v: w for v, w in shown.items() if w}
    ev = list(lits.values())[:4]
    # One expected value: a program that prints that constant passes every run. Several (a list and an empty
    # output, say) and the program must tell its inputs apart: a lookup table, noted at info only.
    if shape.program_input and len(lits) > 1:
        stated = {}
    with_input = bool(shape.program_input) and len(lits) == 1
    in_image = {v: w for v, w in stated.items() if w != "instruction.md"}
    if in_image:
        severity, why = (
            Severity.ERROR,
            (
                f"the verifier only compares the output with {_fmt(in_image)}, and the "
                f"agent's image holds it ({', '.join(sorted(set(in_image.values())))}): "
                "copying it passes without doing the work"
            ),
        )
    elif with_input and not stated:
        severity, why = (
            Severity.WARNING,
            (
                f"the verifier runs the agent's program on a fixed input and only compares "
                f"its output with {_fmt(lits)}: a program that prints that constant passes"
            ),
        )
    elif with_input:
        # The instruction shows this very example and the tests check nothing else. From files alone we cannot
        # tell "print this" from "compute this" here, so we say nothing (examples/always-pass: its flaw is the
        # reward, and its fixed version must come out clean).
        return []
    elif shape.program_input:
        severity, why = (
            Severity.INFO,
            (
                f"the verifier runs the agent's program on fixed inputs and only compares "
                f"its output with {_fmt(lits)}: a lookup of these outputs passes"
            ),
        )
    else:
        # An answer file checked against its value is how "compute X" tasks are verified (examples/tb1-clean):
        # hard-coding it needs the answer, which is the work. Nothing to report unless the image holds it.
        return []
    return [
        Finding.of(
            rule="verifier-literal-only",
            severity=severity,
            message=why,
            evidence=ev
            + [f"{v!r} visible in {w}" for v, w in stated.items()][:3]
            + [f"runs: {e}" for e in shape.program_input[:2]],
            location=ev[0].split(": ")[0],
        )
    ]


def _fmt(values) -> str:
    vals = list(values)
    return ", ".join(repr(v[:40]) for v in vals[:MAX_LITERALS])


def file_name_rules(env: Environment, shape: Shape) -> list[Finding]:
    findings = []
    if shape.exists and not shape.literals and not shape.computed:
        findings.append(
            Finding.of(
                rule="verifier-checks-only-file-names",
                message="the verifier only checks that files with the right names exist, never what they hold: an "
                "agent that creates empty files (`touch`) passes",
                evidence=list(dict.fromkeys(shape.exists))[:5],
                location=shape.exists[0].split(": ")[0],
            )
        )
    tokens: dict[str, str] = {}
    for p in _agent_files(env) if shape.literals else []:
        rel = _rel(env, p)
        parts = Path(rel).parts
        for part in parts:
            stem = part.rsplit(".", 1)[0]
            for t in re.split(r"[._\-\s]+", stem):
                if t and t.casefold() != stem.casefold():
                    tokens.setdefault(t.casefold(), rel)
    leaks = {
        v: tokens[v.strip().casefold()]
        for v in shape.literals
        if v.strip().casefold() in tokens
        and len(v.strip()) >= 3
        and re.search(r"[A-Za-z]", v)
        and v.strip().casefold() not in GENERIC
    }
    if leaks:
        findings.append(
            Finding.of(
                rule="answer-in-file-name",
                message="an answer the verifier expects is written into the name of a file the agent gets: "
                + ", ".join(f"{v!r} in {w}" for v, w in list(leaks.items())[:3]),
                evidence=[shape.literals[v] for v in leaks][:3]
                + [f"{w}: the file name holds {v!r}" for v, w in leaks.items()][:3],
                location=shape.literals[next(iter(leaks))].split(": ")[0],
            )
        )
    return findings


def verifier_shape_findings(env: Environment) -> list[Finding]:
    shape = tests_of(env).shape
    return literal_only_rules(env, shape) + file_name_rules(env, shape)
