"""Rules over the provenance model that are about copies and leftovers (core/task_model/provenance.py), no image:

  verifier-expectation-from-agent (warning) the verifier reads its expectation (a file named expected, truth,
                               golden, or read into such a variable) from a path nothing in the task provides,
                               and compares the agent's other output with it: the agent writes both sides.
  deleted-module-bytecode-left (warning) the build imports a Python module and then deletes its .py, but the
                               module's bytecode stays in __pycache__ (what the author meant to hide).
  verifier-helper-in-image     (warning) the Dockerfile copies into the image a file with the same name and
                               bytes as a verifier file the tests use (a helper they import, a test file, a
                               script test.sh names): the agent reads how it is graded, and a run from its
                               folder may import the copy it can rewrite.

Look-alikes that stay quiet: an expectation the tests or test.sh write first (or a tests/ generator names), a
scratch folder; a module run as a script (no bytecode), or deleted with its __pycache__, or built with
PYTHONDONTWRITEBYTECODE; a starter that shares a helper's name but not its bytes, the tests' pristine copy of an
input under another name, a copy out of a tests folder (dockerfile-copies-tests says what it is).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from envqa.core.consistency.model import Requirement
from envqa.core.defaults import PROVENANCE_MIN_HELPER_BYTES
from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.task_model import model_of
from envqa.core.task_model.files import TestFile
from envqa.core.task_model.provenance import Provenance
from envqa.core.task_model.tests_reader import TestsModel

# The narrower reading for a file the agent writes: "answer" and "solution" name the agent's own output there.
AGENT_EXPECTATION = re.compile(r"(expected|truth|golden|ground_?truth)", re.I)
AGENT_EXPECT_VAR = re.compile(r"^\s*(?:with\b.*\bas\s+)?\w*(expected|truth|golden)\w*\s*[=:]", re.I)
VERIFY_TIME_DIRS = ("/tmp", "/var/tmp", "/logs", "/dev", "/proc")  # what the verifier itself may write first
CODE_SUFFIXES = (".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl", ".r", ".jl", ".lua")


def _agent_expectations(tests: TestsModel, prov: Provenance) -> list[Requirement]:
    """Reads of an expectation (named so by the file or by the variable it is read into) from a path nothing in
    the task provides (not the tests, not the image): the agent writes it, and the same test file compares the
    agent's other work with it. Quiet: a path the tests or test.sh write first, a scratch folder, and a file
    another verifier file names (a generator in tests/ that writes it at verify time, after the agent)."""
    paths = [r for r in tests.requirements if r.kind == "path"]
    written = {prov.absolute(r.value) for r in paths if r.role == "write"}
    agent = [
        r
        for r in paths
        if r.role == "read"
        and prov.origin(r.value).kind == "agent"
        and prov.absolute(r.value) not in written
        and not prov.absolute(r.value).startswith(tuple(d + "/" for d in VERIFY_TIME_DIRS))
    ]
    out = []
    for r in agent:
        name = posixpath.basename(r.value)
        named = AGENT_EXPECTATION.search(name) or AGENT_EXPECT_VAR.search(r.text)
        work = [o for o in agent if o.file == r.file and o.value != r.value]
        generated = any(f.rel != r.file and name in f.text for f in tests.files)
        if named and work and not generated and r.value not in {o.value for o in out}:
            out.append(r)
    return out


def agent_expectation_findings(env: Environment) -> list[Finding]:
    model = model_of(env)
    return [
        Finding.of(
            "verifier-expectation-from-agent",
            f"the verifier reads its expectation from {r.value}, which neither the tests nor the task's image "
            "provide: the agent writes it, so its work is compared with itself",
            evidence=[r.evidence()],
            location=r.where,
        )
        for r in _agent_expectations(model.tests, model.provenance)
    ]


def bytecode_left_findings(env: Environment) -> list[Finding]:
    prov = model_of(env).provenance
    return [
        Finding.of(
            "deleted-module-bytecode-left",
            f"the build imports {posixpath.basename(path)} and then deletes it, but its bytecode stays in "
            f"{posixpath.dirname(path)}/__pycache__: the agent can decompile what the build meant to hide",
            evidence=[imported, removed],
            location=removed.split(": ", 1)[0],
        )
        for path, (imported, removed) in sorted(prov.bytecode_left.items())
    ]


def _used_by_verifier(f: TestFile, tests: TestsModel) -> bool:
    """The verifier runs this file: its entry script, a test file pytest collects, a module the tests import, or
    a file test.sh names."""
    stem = f.path.stem
    if f is tests.script or (
        f.is_python and (stem.startswith("test_") or stem.endswith("_test") or stem == "conftest")
    ):
        return True
    if f.is_python and stem in tests.imported_modules:
        return True
    return tests.script_names(f.name)


def _same_bytes(a: Path, f: TestFile) -> bool:
    """`a` (a file of the build context) is another file with the test file's bytes (the test model compares)."""
    try:
        return a.resolve() != f.path.resolve() and f.same_bytes(a)
    except OSError:
        return False


def image_helper_copy_findings(env: Environment) -> list[Finding]:
    model = model_of(env)
    tests, prov = model.tests, model.provenance
    by_size: dict[int, list[TestFile]] = {}
    for f in tests.files:
        code = f.suffix.lower() in CODE_SUFFIXES and f.error is None and f.size >= PROVENANCE_MIN_HELPER_BYTES
        if code and _used_by_verifier(f, tests):
            by_size.setdefault(f.size, []).append(f)
    findings, seen = [], set()
    for path, origin in sorted(prov.image.items()) if by_size else ():
        if not origin.source or origin.source.strip("./").split("/")[0] in ("tests", "test"):
            continue  # a copy out of a tests folder: dockerfile-copies-tests says what it is (checks or inputs)
        copied = env.build_context / origin.source
        size = copied.stat().st_size if copied.is_file() else -1
        for f in by_size.get(size, []):
            # The same name too: under another name the tests keep their own pristine copy of an input the
            # agent gets (a baseline to beat), which is how a verifier protects itself, not a leak.
            if f.rel in seen or posixpath.basename(path) != f.name or not _same_bytes(copied, f):
                continue
            seen.add(f.rel)
            findings.append(
                Finding.of(
                    "verifier-helper-in-image",
                    f"the Dockerfile copies {path} into the agent's image with the same bytes as {f.rel}, which the "
                    "verifier runs: the agent reads how it is graded, and a test run from its folder may import "
                    "the copy it can rewrite",
                    evidence=[origin.evidence, f"{f.rel}: the verifier's copy (same {f.size} bytes)"],
                    location=origin.evidence.split(": ", 1)[0],
                )
            )
    return findings
