"""Structural checks on an environment directory (no image, no container).

`qa lint` runs these; loading itself already rejects what cannot run (missing files, bad task.toml).

A COPY of solution/ is always critical. A COPY from a tests/ folder is critical when what it copies is the
verifier's checks (test.sh, test_*.py, conftest.py) or an expected output (expected/answer/reference/... in its
name), or a whole folder; a warning when those checks are copied and the instruction points the agent to them (a
deliberate, announced copy: the agent still reads exactly what is checked); info when the copied files are neither
(task inputs kept under tests/: the document to edit, a word list, a simulator the task is about), since nothing
the verifier decides with reaches the agent.
"""

from __future__ import annotations

import re

from envqa.core.environment import Environment
from envqa.core.models import Finding, Severity
from envqa.core.parsers.dockerfile import instruction_spans

CHECK_FILE = re.compile(r"(^|/)(test\.sh|run-tests\.sh|conftest\.py|test_[^/]*\.py|[^/]*_test\.py)$")
EXPECTED_OUTPUT = re.compile(r"expected|answer|solution|solve|gold|truth|reference|oracle", re.I)
LEAKY = re.compile(r"(^|[\s/])(solution|solve\.sh|solution\.sh|tests?|test\.sh|run-tests\.sh|test_outputs\.py)(/|\s|$)")


def lint_structure(env: Environment) -> list[Finding]:
    """COPY/ADD of solution/ or tests/ into any stage, read through the Dockerfile parser: `--chown` and
    exec-form sources count, `${ARG}` is substituted, `COPY --from=stage` (a build stage's files) and text in
    a `RUN <<EOF` heredoc body are not copies."""
    findings: list[Finding] = []
    rel = env.dockerfile.relative_to(env.root).as_posix()
    lines = env.dockerfile.read_text(errors="replace").split("\n")
    for span in instruction_spans("\n".join(lines)):
        if span.keyword not in ("COPY", "ADD"):
            continue
        flags, words = span.flags_and_args()
        if "from" in flags or len(words) < 2:
            continue
        sources = " ".join(words[:-1])
        hit = LEAKY.search(" " + sources + " ")
        if not hit:
            continue
        lineno, line = span.start + 1, lines[span.start]
        what = hit.group(2)
        is_solution = what.startswith("sol")
        severity, message, case = (
            (
                Severity.CRITICAL,
                f"the agent's image receives the reference solution ({sources}): an agent can read and replay it",
                None,
            )
            if is_solution
            else _tests_copy(env, words[:-1], sources)
        )
        findings.append(
            Finding.of(
                rule="dockerfile-copies-solution" if is_solution else "dockerfile-copies-tests",
                message=message,
                severity=severity,
                case=case,
                evidence=[f"{rel}:{lineno}: {line.strip()}"],
                location=f"{rel}:{lineno}",
            )
        )
    return findings


def _copied_files(env: Environment, sources: list[str]) -> list[str] | None:
    """The files the COPY sources name, relative to the build context (a folder: every file in it); None for the
    verifier's own folder (a bare `tests`), a glob, or a folder that is not there (read as the verifier's)."""
    out: list[str] = []
    for src in sources:
        path = env.build_context / src
        if src.strip("./") in ("tests", "test") or "*" in src or "$" in src:
            return None
        if path.is_dir():
            out += sorted(p.relative_to(env.build_context).as_posix() for p in path.rglob("*") if p.is_file())
        elif path.is_file() or not src.endswith("/"):
            out.append(src)
        else:
            return None
    return out


def _tests_copy(env: Environment, sources: list[str], shown: str) -> tuple[Severity, str, str | None]:
    """Severity, message and remedy case (rules.toml `[rule.remedies]`) by what the copied files are."""
    files = _copied_files(env, sources)
    checks = [f for f in files or [] if CHECK_FILE.search(f) or EXPECTED_OUTPUT.search(f.rsplit("/", 1)[-1])]
    if files is None or (checks and not _announced(env, checks)):
        return (
            Severity.CRITICAL,
            f"the agent's image receives the tests ({shown}): an agent can read and replay it",
            None,
        )
    if checks:
        return (
            Severity.WARNING,
            f"the agent's image receives the verifier's checks ({', '.join(checks)}), and the instruction points the "
            "agent to them: deliberate, but the agent reads exactly what is checked and any expected value in it",
            "announced-checks",
        )
    return (
        Severity.INFO,
        f"the image receives files kept under a tests/ folder ({shown}): not the verifier's checks or expected "
        "outputs by their names, so the task's inputs; nothing the verifier decides with reaches the agent",
        "task-inputs",
    )


def _announced(env: Environment, files: list[str]) -> bool:
    """The instruction names every one of these files (its file name as a word): a copy the agent is told of."""
    return all(
        re.search(r"(?<![\w.-])" + re.escape(f.rsplit("/", 1)[-1]) + r"(?![\w-])", env.instruction) for f in files
    )
