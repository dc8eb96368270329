"""Mechanical fixers: safe, model-free patches for the rules where one exists, registered by rule id.

A fixer family covers a few related rules. Each declares, per finding, whether it can act on it
(`precondition` returns None when it can, else the reason it cannot), then edits a scratch copy of the
version in place. The proposal's diff is the difference between the version and that copy, so fixers
never write diffs by hand and never touch the version itself.

`mechanical_fix(version_dir, findings)` runs every applicable family and says which rules still need
a model (no fixer, or a fixer whose precondition failed).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# The families register themselves on import, in this order (the order they run in).
from envqa.agents.fixers import conftest, helpers, instruction, leaks, pins, reward, runtime  # noqa: F401
from envqa.agents.fixers.base import _FAMILIES, FixContext, FixerFamily, register_fixer, render_template
from envqa.core.models import Finding, Severity

__all__ = [
    "FixContext",
    "FixerFamily",
    "MechanicalFix",
    "actionable",
    "families",
    "fixable_rules",
    "mechanical_fix",
    "register_fixer",
    "render_template",
]


def families() -> list[FixerFamily]:
    return list(_FAMILIES)


def fixable_rules() -> dict[str, str]:
    """rule id -> fixer family name: docs/guide/revisions.md's fixers table."""
    return {rule: fam.name for fam in families() for rule in fam.rules}


@dataclass
class MechanicalFix:
    """What the fixers did to a scratch copy: the rules they addressed, why, and what was left."""

    fixed_dir: Path | None
    addressed: list[str] = field(default_factory=list)
    rationale: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    needs_model: list[str] = field(default_factory=list)
    declined: dict[str, str] = field(default_factory=dict)  # rule -> why its fixer did not act


def actionable(findings: list[Finding]) -> list[Finding]:
    """Findings a revision should address (info-level notes are not defects)."""
    return [f for f in findings if f.severity != Severity.INFO]


def mechanical_fix(
    version_dir: Path,
    findings: list[Finding],
    workdir: Path | None = None,
    image_packages: Callable[[], dict[str, str]] | None = None,
) -> MechanicalFix:
    """Run every fixer family that applies on a scratch copy of `version_dir` (left in `fixed_dir`)."""
    todo = actionable(findings)
    scratch = Path(tempfile.mkdtemp(prefix="envqa-fix-", dir=workdir))
    shutil.copytree(version_dir, scratch / "task", symlinks=True)
    ctx = FixContext(root=scratch / "task", findings=todo, image_packages=image_packages)
    out = MechanicalFix(fixed_dir=ctx.root)
    for fam in families():
        mine = [f for f in todo if f.rule in fam.rules]
        if not mine:
            continue
        why_not = fam.precondition(ctx, mine)
        if why_not:
            out.declined.update({f.rule: why_not for f in mine})
            continue
        out.rationale.append(fam.apply(ctx, mine))
        out.addressed += [f.rule for f in mine if f.rule not in out.addressed]
        out.expected += [e for e in fam.expected(mine) if e not in out.expected]
    out.needs_model = sorted({f.rule for f in todo} - set(out.addressed))
    return out
