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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import jinja2

from envqa.core.environment import Environment, load_environment
from envqa.core.models import Finding, Severity

TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class FixContext:
    """A mutable scratch copy of one version, with the findings that concern it."""

    root: Path
    findings: list[Finding]
    # `pip freeze` of the parent's image, on demand (the pin fixer); None when no backend is at hand.
    image_packages: Callable[[], dict[str, str]] | None = None

    @property
    def env(self) -> Environment:
        return load_environment(self.root)

    def rules(self) -> set[str]:
        return {f.rule for f in self.findings}

    def file(self, rel: str) -> Path:
        return self.root / rel


@dataclass
class FixerFamily:
    name: str
    rules: tuple[str, ...]
    precondition: Callable[[FixContext, list[Finding]], str | None]
    apply: Callable[[FixContext, list[Finding]], str]  # edits ctx.root, returns the rationale
    expected: Callable[[list[Finding]], list[str]] = lambda fs: [f"{f.rule} stays silent" for f in fs]


_FAMILIES: list[FixerFamily] = []


def register_fixer(name: str, rules: tuple[str, ...], *, precondition, expected=None):
    def deco(fn):
        _FAMILIES.append(FixerFamily(name=name, rules=rules, precondition=precondition, apply=fn,
                                     **({"expected": expected} if expected else {})))
        return fn
    return deco


def families() -> list[FixerFamily]:
    from envqa.agents.fixers import conftest, helpers, leaks, pins, reward, runtime  # noqa: F401  (register)

    return list(_FAMILIES)


def fixable_rules() -> dict[str, str]:
    """rule id -> fixer family name: the README's fixers table."""
    return {rule: fam.name for fam in families() for rule in fam.rules}


def render_template(name: str, **variables) -> str:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, autoescape=False)
    return env.get_template(name).render(**variables)


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


def mechanical_fix(version_dir: Path, findings: list[Finding], workdir: Path | None = None,
                   image_packages: Callable[[], dict[str, str]] | None = None) -> MechanicalFix:
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
