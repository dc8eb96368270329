"""The gate's `rules` and `mutants` checks: every rule the parent fired, re-checked on the candidate.

Each rule is re-checked the way the rule registry says (core/registry/rules.py: its probe's `recheck`): a probe
rule by re-running its probe, each a job through the executor (envqa.probes.dispatch), like the hunt's; a file
rule by the structure lint. An addressed rule must stay silent and must have been re-checked (unregistered, or
its probe did not run, fails); a rule the re-run finds that the parent did not have (error or worse) fails: the
patch added it. Unaddressed rules never fail the check: they are measured and listed as still open. The rest of
the gate (lint, build, oracle, nop, stored exploits, regrade) is graphs/gate.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.executor import Executor
from envqa.core.models import Finding, GateCheck, TrialResult
from envqa.core.registry import PROBE_INFO, RULES, get_rule, is_registered
from envqa.core.store import Store
from envqa.probes.dispatch import dispatch_probes
from envqa.probes.static.lint import lint_structure

MUTANT_RULE = "verifier-accepts-mutant"

# Which probe the gate re-runs for a rule, from the rule registry; None: the gate's own checks decide it (lint for
# file rules, build/oracle/nop for validation's, the `exploits` check's replays for llm-exploit).
PROBE_OF: dict[str, str | None] = {r.id: r.probe if PROBE_INFO[r.probe].recheck == "probe" else None for r in RULES}


def probe_for(rule: str) -> str | None:
    """The probe that re-checks `rule` (None: a check of the gate's own). No fallback: an unregistered rule
    raises UnknownRule, where it used to re-run the static probe and pass on "none of X fired"."""
    return PROBE_OF[get_rule(rule).id]


def _rechecked_by_lint(rule: str) -> bool:
    return PROBE_INFO[get_rule(rule).probe].recheck == "lint"


@dataclass
class Rerun:
    """What the gate's probe and replay jobs run against (each one a job through the executor, like the
    hunt's: envqa.probes.dispatch): the candidate, the focused config, the gate's oracle/nop runs."""

    env: Environment
    config: QAConfig
    run_id: str
    validation: list[TrialResult]
    executor: Executor
    store: Store


def fired_rules(findings: list[Finding]) -> list[str]:
    return sorted({f.rule for f in findings if f.severity != "info"})


def _not_run(probes: list[str], coverage: list[dict]) -> list[str]:
    """Dispatched probes that left no trace in the coverage (not ran, not skipped with a reason, not lost)."""
    return [
        p
        for p in probes
        if not any(c.get("probe") == p or str(c.get("probe", "")).startswith(p + "/") for c in coverage)
    ]


def _skipped(probes: list[str], coverage: list[dict]) -> list[str]:
    return [
        f"{c['probe']} skipped ({c.get('reason')})"
        for c in coverage
        if c.get("probe") in probes and c.get("status") == "skipped"
    ]


@dataclass
class _RulesPlan:
    """What the rules check re-checks: the parent's fired rules split by who can re-check them."""

    fired: list[str]  # registered rules that fired on the parent (error or worse)
    fixing: set[str]  # the rules this proposal addresses
    unknown: list[str]  # addressed but unregistered: nothing can re-check them, so the check fails
    open_unknown: list[str]  # unregistered and not addressed: listed as still open
    probes: list[str]  # the probes to re-run (each a job through the executor)
    by_lint: list[str]  # rules the structure lint re-checks on the candidate

    def needs_rerun(self) -> bool:
        return bool(self.probes or self.unknown or self.by_lint)

    def addressed_probes(self) -> set[str]:
        return {p for r in self.fired if r in self.fixing and (p := probe_for(r))}


@dataclass
class _Rechecked:
    """What the re-run probes and the structure lint found on the candidate."""

    found: list[Finding]
    lost: list[str]  # probes that could not finish
    coverage: list[dict]
    trial_ids: list[str]
    again: list[str]  # fired rules that fire again
    new: list[str]  # error-or-worse rules the parent did not have
    not_run: list[str]  # dispatched probes that left no trace


def _rules_plan(parent_fired: list[str], fixing: set[str]) -> _RulesPlan:
    unregistered = [r for r in parent_fired if not is_registered(r)]
    fired = [r for r in parent_fired if r not in unregistered]
    return _RulesPlan(
        fired=fired,
        fixing=fixing,
        unknown=[r for r in unregistered if r in fixing],
        open_unknown=[f"{r} (not registered: cannot be re-checked)" for r in unregistered if r not in fixing],
        probes=sorted({p for r in fired if (p := probe_for(r))}),
        by_lint=[r for r in fired if _rechecked_by_lint(r)],
    )


def _recheck(ctx: Rerun, plan: _RulesPlan, known_before: Callable[[], set[str]]) -> _Rechecked:
    """Re-run the plan's probes (jobs through the executor) and the structure lint on the candidate."""
    found, lost, coverage, trials = (
        dispatch_probes(ctx.executor, ctx.store, ctx.env, ctx.config, ctx.run_id, plan.probes, ctx.validation)
        if plan.probes
        else ([], [], [], [])
    )
    found = found + [f for f in lint_structure(ctx.env) if f.rule in plan.by_lint]
    known = known_before()
    return _Rechecked(
        found=found,
        lost=lost,
        coverage=coverage,
        trial_ids=[t.trial_id for t in trials],
        again=sorted({f.rule for f in found} & set(plan.fired)),
        new=sorted({f.rule for f in found if f.rule not in known and f.severity in ("error", "critical")}),
        not_run=[] if lost else _not_run(plan.probes, coverage),
    )


def _unsure(plan: _RulesPlan, seen: _Rechecked) -> list[str]:
    """Unaddressed rules whose probe did not run or could not finish: open, since not shown gone."""
    return [
        r
        for r in plan.fired
        if r not in plan.fixing and r not in seen.again and (p := probe_for(r)) and (p in seen.not_run or seen.lost)
    ]


def _rules_summary(plan: _RulesPlan, seen: _Rechecked, still_open: list[str], unsure: list[str]) -> str:
    """The rules check's detail: what still fires, what was re-run and found silent, then every caveat."""
    other = [r for r in seen.again if r != MUTANT_RULE and r in plan.fixing]
    how = ", ".join(plan.probes + (["the structure rules"] if plan.by_lint else []))
    silent = [r for r in plan.fired if r != MUTANT_RULE and r in plan.fixing]
    if other:
        detail = f"still fire on the candidate: {', '.join(other)}"
    elif silent:
        detail = f"re-ran {how}: none of {', '.join(silent)} fired"
    elif plan.fired:
        detail = f"re-ran {how}: the proposal addresses none of the probe rules"
    else:
        detail = "no registered rule fired"
    also = [r for r in plan.fired if r not in plan.fixing and r not in seen.again and r not in unsure and probe_for(r)]
    skipped = _skipped(plan.probes, seen.coverage)
    notes = [
        (seen.new, f"new on the candidate: {', '.join(seen.new)}"),
        (still_open, f"still open (not addressed by this proposal): {', '.join(still_open)}"),
        (also, f"also silent now, though not addressed: {', '.join(also)}"),
        (skipped, "; ".join(skipped)),
        (
            plan.unknown,
            f"not registered, so nothing can re-check them: {', '.join(plan.unknown)} (core/registry/rules.py)",
        ),
        (seen.not_run, f"did not run: {', '.join(seen.not_run)}"),
        (seen.lost, f"could not finish: {'; '.join(seen.lost)}"),
    ]
    return detail + "".join(f"; {text}" for present, text in notes if present)


def _rules_passed(plan: _RulesPlan, seen: _Rechecked) -> bool:
    """An addressed rule still firing, a new rule, an addressed probe lost or not run, or an addressed rule no
    probe can re-check: each fails the check. Unaddressed rules never do (they are listed as still open)."""
    addressed = plan.addressed_probes()
    still_fires = any(r != MUTANT_RULE and r in plan.fixing for r in seen.again)
    lost_addressed = bool(seen.lost) and bool(addressed)
    not_run_addressed = any(p in addressed for p in seen.not_run)
    return not (still_fires or seen.new or lost_addressed or plan.unknown or not_run_addressed)


def _mutants_check(plan: _RulesPlan, seen: _Rechecked) -> GateCheck | None:
    """When the proposal addresses surviving mutants: are they killed now?"""
    if MUTANT_RULE not in plan.fired or MUTANT_RULE not in plan.fixing:
        return None
    killed = MUTANT_RULE not in seen.again
    ev = next((f.evidence for f in seen.found if f.rule == MUTANT_RULE), [])
    return GateCheck(
        name="mutants",
        passed=killed,
        detail="the surviving mutants are now killed"
        if killed
        else "mutants still survive: " + "; ".join(e[:200] for e in ev[:3]),
        trial_ids=seen.trial_ids,
    )


def rules_checks(
    ctx: Rerun, parent_fired: list[str], fixing: set[str], known_before: Callable[[], set[str]]
) -> tuple[list[GateCheck], list[str]]:
    """(the rules/mutants checks, the unaddressed parent rules still open). Every fired rule is re-checked
    (so the still-open list is measured, not assumed); only the addressed ones, and new ones, decide.
    `known_before()`: the rules the parent already had (a rule outside it found now is new)."""
    plan = _rules_plan(parent_fired, fixing)
    if not plan.needs_rerun():
        # validation's rules and llm-exploit: the gate's own checks re-check them
        own = f"; the gate's own checks re-check {', '.join(plan.fired)}" if plan.fired else ""
        detail = "no probe rule fired on the parent" + own
        return [GateCheck(name="rules", passed=True, detail=detail)], plan.open_unknown
    seen = _recheck(ctx, plan, known_before)
    unsure = _unsure(plan, seen)
    still_open = (
        [r for r in seen.again if r not in plan.fixing] + plan.open_unknown + [f"{r} (not re-checked)" for r in unsure]
    )
    rules = GateCheck(
        name="rules",
        passed=_rules_passed(plan, seen),
        detail=_rules_summary(plan, seen, still_open, unsure),
        trial_ids=seen.trial_ids,
    )
    mutants = _mutants_check(plan, seen)
    return [rules] + ([mutants] if mutants else []), still_open
