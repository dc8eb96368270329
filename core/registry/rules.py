"""The rule registry: every rule id `qa` can report, with what it means, who finds it and who fixes it.

A rule id is our API (findings, `--json`, `qa-expected.json`, the fixers, the gate): stable kebab-case,
never reused. Each rule names the probe that produces it, and each probe says how the validation gate
re-checks its rules on a candidate, so the gate never guesses (it used to fall back to the static probe
and then report "none of X fired" for a rule the static probe cannot produce). `Finding` refuses a rule
id that is not here. The rows are data, in rules.toml next to this module. To add a rule: add a [[rule]] there
(then `make docs`: tests/test_docs.py checks docs/reference/rules.md), then emit `Finding.of(rule_id, message, ...)`
from its probe: label, severity and fix come from the row (`Rule.remedy_for`), never from the call site.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from envqa.core.registry.exploits import EXPLOITS
from envqa.core.registry.labels import LABEL_INFO


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"


@dataclass(frozen=True)
class ProbeInfo:
    """A probe, declared once: where its rules come from (the rules name it: `probe =` in rules.toml), the stage
    of `qa run` it belongs to, and how the validation gate re-checks its rules. `recheck`: "lint" (file rules,
    read again on the candidate), "validate" (the gate's own build/oracle/nop checks), "probe" (the probe runs
    again as a job), "replay" (the stored LLM exploits are replayed). `hunt`: a function the hunt runs by this
    name (`@register_probe(name)` in probes/, which probes/catalog.py checks against this table at import);
    `default`: the hunt runs it unless `[probes] enabled` says otherwise (the default list is these, in order)."""

    name: str
    stage: str  # the stage of `qa run` it belongs to (docs/reference/checks.md)
    recheck: Literal["lint", "validate", "probe", "replay"]
    hunt: bool = False
    default: bool = False


# The probes, in the order the hunt runs its default ones. A new probe: a row here, and its function.
PROBES: tuple[ProbeInfo, ...] = (
    ProbeInfo("load", "load", "lint"),
    ProbeInfo("validate", "validate", "validate"),
    ProbeInfo("static", "hunt: static", "probe", hunt=True, default=True),
    ProbeInfo("oracle_runs", "hunt: oracle x k", "probe", hunt=True, default=True),
    ProbeInfo("exploits", "hunt: exploits", "probe", hunt=True, default=True),
    ProbeInfo("solver_passes", "hunt: solver passes", "probe", hunt=True, default=True),
    ProbeInfo("oracle_state", "hunt: oracle end state", "probe", hunt=True, default=True),
    ProbeInfo("egress", "hunt: egress", "probe", hunt=True, default=True),
    # names the nop's cause as a subtype of validate's nop-passes (its finding supersedes validate's)
    ProbeInfo("nop_cause", "hunt: nop cause", "probe", hunt=True, default=True),
    ProbeInfo("hunter", "hunt: LLM hunter", "replay"),
    ProbeInfo("cross_trial", "analyze: across trials", "validate"),  # the next sweep re-measures (issue 33)
)
PROBE_INFO = MappingProxyType({p.name: p for p in PROBES})


@dataclass(frozen=True)
class Rule:
    """One rule. `severity` is the most a finding of it carries (a few are lower in context: the finding
    says); `subtype` is the label's subtype it proves (None: the finding names it); `fixer` the mechanical
    fixer family that patches it (agents/fixers), if any; `kind` "inconclusive" for the outcomes that make a
    run inconclusive instead of a finding (exit 3)."""

    id: str
    label: str
    subtype: str | None
    severity: Severity
    probe: str
    summary: str
    remedy: str = ""
    fixer: str | None = None
    proves_trials: bool = False  # the finding's trial ids are passes it proves were shortcuts (the labeller)
    kind: Literal["finding", "inconclusive"] = "finding"
    # How `qa lint` checks it (core/registry/lint_coverage.py): "" with the probe's own rules (load, static),
    # "image" only with --image (it reads the built image), "strict" only with --strict (an opt-in rule),
    # "online" only with --online (it asks the package indexes a build uses).
    lint: Literal["", "image", "strict", "online"] = ""
    # Rules whose findings this rule's finding explains: they give way to it in the same version (the network
    # explains a reference solution that fails offline). graphs/loop_state.py applies it.
    explains: tuple[str, ...] = ()
    # Rules whose finding at the same file line this rule's finding gives the real cause of (a file the verifier
    # reads as its expectation is not an output the instruction forgot): they give way to it at that line.
    # probes/static/findings.py applies it to the static findings (`qa lint` and the hunt alike).
    explains_at_line: tuple[str, ...] = ()
    # Dynamic rules whose finding (error or above) proves this rule's suspicion from the files in a run: the
    # suspicion is raised to the proof's severity and names the proof and its trials (graphs/loop_state.py).
    proven_by: tuple[str, ...] = ()
    # The remedy for one case of the rule (a subtype the finding names, or a context its probe names), used
    # instead of `remedy` for that case: the remedy stays a fact of the registry, not of the call site.
    remedies: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    # The label of one case (a subtype the finding names), used instead of `label` for it: one general rule whose
    # cases mean different things (a check that reads the agent's source is a shortcut, one that grades which tool
    # ran is brittleness) keeps one row, and the label stays a fact of the registry, not of the call site.
    labels: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)

    def label_for(self, case: str | None = None) -> str:
        """The label a finding of this rule carries: its case's (when the row names one), else the rule's."""
        return self.labels.get(case or "", self.label)

    def remedy_for(self, case: str | None = None, **fields: str) -> str | None:
        """The fix a finding of this rule carries: the case's remedy (else the rule's), with its named fields
        (`{want}`, ...) filled from `fields`; None when the registry has no remedy for it."""
        text = self.remedies.get(case or "", self.remedy)
        return (text.format(**fields) if fields else text) or None

    def public(self) -> dict:
        """The `qa rules --json` row."""
        return {
            "id": self.id,
            "label": self.label,
            "subtype": self.subtype,
            "severity": self.severity.value,
            "probe": self.probe,
            "fixer": self.fixer,
            "description": self.summary,
            "remedy": self.remedy,
            "kind": self.kind,
        }


DATA = Path(__file__).with_name("rules.toml")


def _load() -> list[Rule]:
    """The rules of rules.toml, in order; a row with a missing or unknown field fails here, at import."""
    rows = tomllib.loads(DATA.read_text())["rule"]
    try:
        return [
            Rule(
                **{
                    "subtype": None,
                    **row,
                    "severity": Severity(row["severity"]),
                    "explains": tuple(row.get("explains", ())),
                    "explains_at_line": tuple(row.get("explains_at_line", ())),
                    "proven_by": tuple(row.get("proven_by", ())),
                    "remedies": MappingProxyType(dict(row.get("remedies", {}))),
                    "labels": MappingProxyType(dict(row.get("labels", {}))),
                }
            )
            for row in rows
        ]
    except (TypeError, ValueError, KeyError) as e:
        raise ValueError(f"{DATA}: a [[rule]] row is malformed: {e}") from None


_RULES: list[Rule] = _load()
_EXPLOIT_FIXERS = {
    "exploit-reward-tamper": "reward",
    "exploit-workspace-conftest": "conftest",
    "exploit-leaked-answers": "leaks",
    "exploit-verifier-helper": "helpers",
}
# hunt: exploits (probes/exploits/probe.py): one rule per scripted exploit, from the exploit registry
_RULES += [
    Rule(
        e.name,
        "shortcut",
        e.subtype,
        Severity.CRITICAL,
        "exploits",
        f"a scripted exploit earned reward: {e.attack}",
        e.remedy,
        fixer=_EXPLOIT_FIXERS.get(e.name),
    )
    for e in EXPLOITS
]

RULES: tuple[Rule, ...] = tuple(_RULES)
RULE_INFO = MappingProxyType({r.id: r for r in RULES})
KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class UnknownRule(ValueError):
    """A rule id the registry does not know: a typo, or a rule added without its `Rule` row."""

    def __init__(self, rule_id: str):
        self.rule_id = rule_id
        super().__init__(f"{rule_id!r} is not a registered rule id (add it to envqa/core/registry/rules.py)")


def get_rule(rule_id: str) -> Rule:
    try:
        return RULE_INFO[rule_id]
    except KeyError:
        raise UnknownRule(rule_id) from None


def is_registered(rule_id: str) -> bool:
    return rule_id in RULE_INFO


def rules_of_probe(probe: str) -> tuple[str, ...]:
    return tuple(r.id for r in RULES if r.probe == probe)


def rules_fixed_by(fixer: str) -> tuple[str, ...]:
    """A fixer family's rules, in registry order (agents/fixers/*: their RULES)."""
    return tuple(r.id for r in RULES if r.fixer == fixer)


# Derived tables the callers knew by these names.
HUNT_PROBES: tuple[str, ...] = tuple(p.name for p in PROBES if p.hunt)
DEFAULT_PROBES: tuple[str, ...] = tuple(p.name for p in PROBES if p.default)  # `[probes] enabled`'s default
FINDING_RULES: tuple[str, ...] = tuple(r.id for r in RULES if r.kind == "finding")
FIXERS: dict[str, str] = {r.id: r.fixer for r in RULES if r.fixer}
# The labeller: findings whose trial ids prove a pass was a shortcut -> the subtype (None: the message names it).
SHORTCUT_RULES: dict[str, str | None] = {r.id: r.subtype for r in RULES if r.proves_trials}
REMEDIES: dict[str, str] = {r.id: r.remedy for r in RULES if r.remedy}
# rule -> the rules its finding explains (and so withdraws within a version).
EXPLAINS: dict[str, tuple[str, ...]] = {r.id: r.explains for r in RULES if r.explains}
# rule -> the rules its finding explains at the same file line (and so withdraws there).
EXPLAINS_AT_LINE: dict[str, tuple[str, ...]] = {r.id: r.explains_at_line for r in RULES if r.explains_at_line}
# rule -> the dynamic rules whose finding in a run proves it (and so raises it, naming the trial).
PROVEN_BY: dict[str, tuple[str, ...]] = {r.id: r.proven_by for r in RULES if r.proven_by}


def _check() -> None:
    """The table is consistent (a wrong row fails at import, not in a run)."""
    if bad := [p.name for p in PROBES if p.default and not p.hunt]:
        raise ValueError(f"probes {bad} are default but not run by the hunt (hunt=False)")
    seen: set[str] = set()
    for r in RULES:
        info = LABEL_INFO.get(r.label)
        problems = [
            what
            for what, bad in (
                ("not stable kebab-case", not re.match(KEBAB, r.id)),
                ("registered twice", r.id in seen),
                (f"unknown label {r.label!r}", info is None),
                (f"unknown probe {r.probe!r}", r.probe not in PROBE_INFO),
                (
                    f"{r.subtype!r} is not a subtype of {r.label}",
                    info is not None
                    and r.subtype is not None
                    and r.subtype not in {**info.model_subtypes, **info.rule_subtypes},
                ),
            )
            if bad
        ]
        problems += [
            f"explains or is proven by unknown rule {other!r}"
            for other in r.explains + r.explains_at_line + r.proven_by
            if other not in RULE_INFO
        ]
        problems += [f"remedy for case {case!r} but no general remedy" for case in r.remedies if not r.remedy]
        problems += [
            f"case {case!r} has unknown label {lab!r}" for case, lab in r.labels.items() if lab not in LABEL_INFO
        ]
        if problems:
            raise ValueError(f"rule {r.id!r}: {'; '.join(problems)}")
        seen.add(r.id)


_check()
