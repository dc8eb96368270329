"""A function the instruction names but never gives the call form of, which the tests call with a keyword it never
states (issue 42, item 2: "a signature or interface the tests call vs one the instruction states").

TB2 2.0's adaptive-rejection-sampler says 'Include a primary function named "ars"' and its tests call
`ars(normal_density, c(-5, 5), n = 1000)`: the argument order and the keyword `n` are the tests' alone (2.1 adds
the signature). Read from the text of every test file (the test model's calls: core/task_model/calls.py), so a
call inside embedded code (R, a shell line) counts too. Reported under instruction-omits-tested-requirement,
citing the instruction's line that names the function and the test's line that calls it.

Quiet when the instruction writes the function with parentheses (a signature, even a partial one), when every
keyword of the call appears in the instruction as a word, and when the call has no keyword at all.
"""

from __future__ import annotations

import re

from envqa.core.consistency.guards import instruction_file
from envqa.core.defaults import GUARD_MAX_BYTES
from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, read_text
from envqa.core.models import Finding
from envqa.core.task_model.model import tests_of

# A function the instruction names as a literal: "ars", `ars`, 'ars' (quoted, an identifier).
NAMED = re.compile(r"""["'`]([A-Za-z_][\w.]{1,40})["'`]""")


def _named_functions(instruction: str) -> dict[str, tuple[int, str]]:
    """Each identifier the instruction quotes next to the word function (its line), with no call form given."""
    out: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(instruction.splitlines(), 1):
        if not re.search(r"\b(function|method|routine|procedure)s?\b", line, re.I):
            continue
        for m in NAMED.finditer(line):
            name = m.group(1)
            if re.search(re.escape(name) + r"\s*\(", instruction):
                continue  # the instruction gives its call form
            out.setdefault(name, (n, line.strip()))
    return out


def _oracle_text(env: Environment) -> str:
    """The reference solution's text (its scripts and sources), each file read through the guarded reader."""
    texts = []
    for copy in env.solution:
        files = [copy.source] if copy.source.is_file() else sorted(p for p in copy.source.rglob("*") if p.is_file())
        for path in files:
            try:
                texts.append(read_text(path, limit=GUARD_MAX_BYTES))
            except InputFileError:
                continue
    return "\n".join(texts)


def _defined(name: str, text: str) -> bool:
    """The oracle defines `name` (Python, R, JavaScript, shell, Rust, Go, Julia): the agent's to write, not a
    library's (dnorm, print)."""
    n = re.escape(name)
    return bool(re.search(rf"\b(?:def|function|fn|func|sub)\s+{n}\s*\(|(?<![\w.]){n}\s*(?:<-|=)\s*function\b", text))


def signature_findings(env: Environment) -> list[Finding]:
    if not env.instruction.strip() or not env.tests:
        return []
    oracle = _oracle_text(env)
    named = {k: v for k, v in _named_functions(env.instruction).items() if _defined(k, oracle)}
    if not named:
        return []
    words = set(re.findall(r"[A-Za-z_][\w.]*", env.instruction))
    out: list[Finding] = []
    seen: set[str] = set()
    for call in tests_of(env).keyword_calls(list(named)):  # core/task_model/calls.py
        unstated = [k for k in call.keywords if k not in words]
        if call.name in seen or not unstated:
            continue
        seen.add(call.name)
        at, said = named[call.name]
        f, name = call.file, call.name
        out.append(
            Finding.of(
                rule="instruction-omits-tested-requirement",
                message=f"the tests call {name}(...) with the keyword {unstated[0]}, but the "
                f"instruction names {name} without its signature: an agent cannot know the argument "
                "order or names the tests use",
                evidence=[
                    f"test: {f.rel}:{call.line}: {call.text}",
                    f"instruction: {instruction_file(env)}:{at}: {said}",
                ],
                location=f"{f.rel}:{call.line}",
                remedy_fields={"want": f"the signature of {name} ({call.call})"},
            )
        )
    return out
