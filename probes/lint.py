"""Structural checks on an environment directory (no image, no container).

`qa lint` runs these; loading itself already rejects what cannot run (missing files, bad task.toml).
"""

from __future__ import annotations

import re

from envqa.core.environment import Environment
from envqa.core.models import Finding
from envqa.core.parsers.dockerfile import instruction_spans

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
        findings.append(
            Finding.of(
                rule="dockerfile-copies-solution" if is_solution else "dockerfile-copies-tests",
                message=(
                    f"the agent's image receives {'the reference solution' if is_solution else 'the tests'} "
                    f"({sources}): an agent can read and replay it"
                ),
                evidence=[f"{rel}:{lineno}: {line.strip()}"],
                location=f"{rel}:{lineno}",
            )
        )
    return findings
