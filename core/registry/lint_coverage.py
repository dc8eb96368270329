"""What `qa lint` checked and what it could not: counted from the rule registry, never by hand.

`qa lint` runs the rules of the file-only probes (load, static); a rule marked `lint = "image"` in rules.toml
only with --image, one marked `lint = "strict"` only with --strict, one marked `lint = "online"` only with
--online. Every other rule needs `qa run` (a built
image, trials, or agents' runs). An exit 0 says how much "nothing found" covers.
"""

from __future__ import annotations

from dataclasses import dataclass

from envqa.core.registry.rules import RULES, Rule

LINT_PROBES = ("load", "static")


@dataclass(frozen=True)
class LintCoverage:
    checked: tuple[str, ...]  # the rule ids this lint ran
    unchecked: tuple[str, ...]  # the rule ids it could not run (they need qa run, --image, --strict or --online)
    image: bool

    def public(self, found: bool = False) -> dict:
        return {
            "static_rules": len(self.checked),
            "unchecked_rules": len(self.unchecked),
            "unchecked": list(self.unchecked),
            "summary": self.summary(found),
        }

    def summary(self, found: bool) -> str:
        how = "`qa run`" if self.image else "`qa run` (or `--image`)"
        head = (
            f"checked by {len(self.checked)} static rules"
            if found
            else f"nothing found by {len(self.checked)} static rules"
        )
        return f"{head}; {len(self.unchecked)} rules need {how} and were not checked"


def _runs(rule: Rule, image: bool, strict: bool, online: bool) -> bool:
    if rule.lint == "image":
        return image
    if rule.lint == "online":
        return online
    if rule.lint == "strict":
        return strict and rule.probe in LINT_PROBES
    return rule.probe in LINT_PROBES


def lint_coverage(image: bool = False, strict: bool = False, online: bool = False) -> LintCoverage:
    checked = tuple(r.id for r in RULES if r.kind == "finding" and _runs(r, image, strict, online))
    unchecked = tuple(r.id for r in RULES if r.kind == "finding" and r.id not in checked)
    return LintCoverage(checked, unchecked, image)
