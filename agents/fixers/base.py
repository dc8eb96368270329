"""The fixer machinery: what a fixer family sees (FixContext), how one registers (`register_fixer`, checked against
the rule registry at import) and the templates it renders. The families themselves are the sibling modules;
envqa.agents.fixers imports them all and runs them (`mechanical_fix`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jinja2

from envqa.core.environment import Environment, load_environment
from envqa.core.models import Finding
from envqa.core.registry import rules_fixed_by

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
    """Register a fixer family for `rules`: exactly the rule registry's rows naming this fixer (a rule that
    does not name it, or one left out, fails here, at import, not in a run)."""
    if set(rules) != set(rules_fixed_by(name)):
        raise ValueError(
            f"fixer {name!r} registers {sorted(rules)}, the rule registry gives it "
            f"{sorted(rules_fixed_by(name))} (core/registry/rules.py)"
        )

    def deco(fn):
        _FAMILIES.append(
            FixerFamily(
                name=name,
                rules=rules,
                precondition=precondition,
                apply=fn,
                **({"expected": expected} if expected else {}),
            )
        )
        return fn

    return deco


def render_template(name: str, **variables) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701 - shell and Python, not HTML
    )
    return env.get_template(name).render(**variables)
