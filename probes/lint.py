"""Structural checks on an environment directory (no image, no container).

`qa lint` runs these; loading itself already rejects what cannot run (missing files, bad task.toml).
"""

from __future__ import annotations

import re

from envqa.environment import Environment
from envqa.models import Finding, Label, Severity

COPY_RE = re.compile(r"^\s*(COPY|ADD)\s+(.*)$", re.IGNORECASE)
LEAKY = re.compile(r"(^|[\s/])(solution|solve\.sh|solution\.sh|tests?|test\.sh|run-tests\.sh|test_outputs\.py)(/|\s|$)")


def lint_structure(env: Environment) -> list[Finding]:
    findings: list[Finding] = []
    rel = env.dockerfile.relative_to(env.root).as_posix()
    for lineno, line in enumerate(env.dockerfile.read_text().splitlines(), start=1):
        m = COPY_RE.match(line)
        if not m:
            continue
        args = [a for a in m.group(2).split() if not a.startswith("--")]
        sources = " ".join(args[:-1])
        hit = LEAKY.search(" " + sources + " ")
        if not hit:
            continue
        what = hit.group(2)
        is_solution = what.startswith("sol")
        findings.append(Finding(
            rule="dockerfile-copies-solution" if is_solution else "dockerfile-copies-tests",
            label=Label.SHORTCUT, severity=Severity.CRITICAL,
            message=(f"the agent's image receives {'the reference solution' if is_solution else 'the tests'} "
                     f"({sources}): an agent can read and replay it"),
            evidence=[f"{rel}:{lineno}: {line.strip()}"], location=f"{rel}:{lineno}",
            fix="remove this COPY; solution/ and tests/ are uploaded only in their own phase",
        ))
    return findings
