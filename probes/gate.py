"""The validation gate: a candidate version must prove itself before any human sees it.

Checks, in order (a failed check stops the ones that need what it proves):
  lint       the file rules (structure and static) the proposal addresses no longer fire on the candidate
  build      the candidate's image builds
  oracle     oracle x k passes; nop fails (through the executor, like every trial)
  rules      every rule that fired on the parent is re-checked the way the rule registry says
             (core/registry/rules.py: its probe's `recheck`) and stays silent (exploits must fail); each probe
             is a job through the executor (envqa.probes.dispatch), like the hunt's. A rule the registry does
             not know, or whose probe did not run, fails the check: nothing showed it gone
  mutants    surviving mutants are now killed (when verifier-accepts-mutant fired on the parent)
  exploits   every LLM exploit stored for this environment (the hunter's passes, by any earlier version or
             run), replayed without the model, now fails: a closed hole stays closed in every later revision
  regrade    every legitimate solver pass of the parent, replayed from its trajectory without the model,
             still passes: a patch that breaks correct solutions is stopped here
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.models import Finding, GateCheck, GateResult, Outcome, TrialResult, TrialSpec
from envqa.core.registry import PROBE_INFO, RULES, SKIP_ON_REGRADE, get_rule, is_registered
from envqa.probes.lint import lint_structure
from envqa.probes.regression_exploits import exploits_for_env
from envqa.probes.replay_units import EXPLOIT_REPLAY, SOLVER_REPLAY, exploit_replay_args, solver_replay_args
from envqa.probes.solver_passes import solver_commands
from envqa.probes.static import static_findings
from envqa.core.sandbox import ImageBuildError, SandboxBackend
from envqa.probes.dispatch import dispatch_probes, dispatch_replays

log = structlog.get_logger(__name__)

# Which probe the gate re-runs for a rule, from the rule registry; None: the gate's own checks decide it (lint for
# file rules, build/oracle/nop for validation's, the `exploits` check's replays for llm-exploit).
PROBE_OF: dict[str, str | None] = {r.id: r.probe if PROBE_INFO[r.probe].recheck == "probe" else None for r in RULES}
LABEL_SKIP = SKIP_ON_REGRADE  # a solver pass labelled a shortcut (or infra) is not one the patch must keep


@dataclass
class GateInputs:
    run_id: str
    candidate: Environment
    parent_findings: list[Finding]
    parent_trials: list[TrialResult]
    addresses: list[str]
    parent_labels: dict[str, str]  # trial_id -> label, when #11's labels exist
    request_kind: str | None = None  # decide's request; "too_easy" means some current passes are meant to fail


def probe_for(rule: str) -> str | None:
    """The probe that re-checks `rule` (None: a check of the gate's own). No fallback: an unregistered rule
    raises UnknownRule, where it used to re-run the static probe and pass on "none of X fired"."""
    return PROBE_OF[get_rule(rule).id]


def _rechecked_by_lint(rule: str) -> bool:
    return PROBE_INFO[get_rule(rule).probe].recheck == "lint"


@dataclass
class _Rerun:
    """What the gate's probe and replay jobs run against (each one a job through the executor, like the
    hunt's: envqa.probes.dispatch): the candidate, the focused config, the gate's oracle/nop runs."""

    env: Environment
    config: QAConfig
    run_id: str
    validation: list[TrialResult]
    executor: object
    store: object


def run_gate(config: QAConfig, backend: SandboxBackend, executor, store, inputs: GateInputs) -> GateResult:
    """Every trial goes through `executor` (progress events come from its own sink)."""
    env, checks = inputs.candidate, []
    fixing = set(inputs.addresses)
    static_rules = {f.rule for f in static_findings(env) + lint_structure(env)}
    still = sorted(fixing & static_rules)
    checks.append(GateCheck(name="lint", passed=not still,
                            detail=f"still fires: {', '.join(still)}" if still else "the addressed static rules are silent"))
    try:
        tag, built = backend.ensure_image(env)
        if built:
            store.record_build(tag, env.version)
        checks.append(GateCheck(name="build", passed=True, detail=f"image {tag}" + (" built" if built else " cached")))
    except ImageBuildError as e:
        checks.append(GateCheck(name="build", passed=False, detail=f"the image does not build: {e}"))
        return GateResult(passed=False, checks=checks)
    k = config.oracle_runs_for("gate")
    specs = [TrialSpec(run_id=inputs.run_id, env_version=env.version, agent="oracle", index=i, purpose="gate")
             for i in range(k)] + [TrialSpec(run_id=inputs.run_id, env_version=env.version, agent="nop", purpose="gate")]
    results = executor.run(env, specs)
    oracle = [r for r in results if r.agent == "oracle"]
    nop = [r for r in results if r.agent == "nop"]
    bad_oracle = [r for r in oracle if r.outcome != Outcome.PASS]
    checks.append(GateCheck(
        name="oracle", passed=not bad_oracle,
        detail=f"{len(oracle) - len(bad_oracle)}/{len(oracle)} oracle runs passed"
               + (f"; failed: {_why(bad_oracle[0])}" if bad_oracle else ""),
        trial_ids=[r.trial_id for r in oracle]))
    checks.append(GateCheck(name="nop", passed=all(r.outcome == Outcome.FAIL for r in nop),
                            detail="nop fails" if all(r.outcome == Outcome.FAIL for r in nop)
                            else f"nop did not fail: {_why(nop[0])}", trial_ids=[r.trial_id for r in nop]))
    if bad_oracle:
        return GateResult(passed=False, checks=checks)
    rerun = _Rerun(env, _focused(config, inputs.parent_findings), inputs.run_id, results, executor, store)
    checks += _rules_checks(rerun, inputs)
    checks.append(_stored_exploits(rerun))
    checks.append(_regrade(rerun, inputs))
    return GateResult(passed=all(c.passed for c in checks), checks=checks)


def _why(r: TrialResult) -> str:
    return f"trial {r.trial_id} {r.outcome.value} reward={r.reward}" + (f" ({r.error_class}: {r.error_message})"
                                                                         if r.error_class else "")


def _focused(config: QAConfig, findings: list[Finding]) -> QAConfig:
    """The config for re-running the parent's rules: only the exploits that fired, gate-sized oracle runs."""
    exploits = sorted({f.rule for f in findings if is_registered(f.rule) and get_rule(f.rule).probe == "exploits"})
    probes = config.probes.model_copy(update={"exploits": exploits or config.probes.exploits,
                                              "oracle_runs": config.oracle_runs_for("gate")})
    return config.model_copy(update={"probes": probes})


def _not_run(probes: list[str], coverage: list[dict]) -> list[str]:
    """Dispatched probes that left no trace in the coverage (not ran, not skipped with a reason, not lost)."""
    return [p for p in probes if not any(c.get("probe") == p or str(c.get("probe", "")).startswith(p + "/")
                                         for c in coverage)]


def _skipped(probes: list[str], coverage: list[dict]) -> list[str]:
    return [f"{c['probe']} skipped ({c.get('reason')})" for c in coverage
            if c.get("probe") in probes and c.get("status") == "skipped"]


def _rules_checks(ctx: _Rerun, inputs: GateInputs) -> list[GateCheck]:
    fired = sorted({f.rule for f in inputs.parent_findings if f.severity != "info"})
    unknown = [r for r in fired if not is_registered(r)]
    fired = [r for r in fired if r not in unknown]
    probes = sorted({p for r in fired if (p := probe_for(r))})
    by_lint = [r for r in fired if _rechecked_by_lint(r)]
    if not probes and not unknown and not by_lint:
        own = f"; the gate's own checks re-check {', '.join(fired)}" if fired else ""  # validation's, llm-exploit
        return [GateCheck(name="rules", passed=True, detail="no probe rule fired on the parent" + own)]
    found, lost, coverage, trials = (dispatch_probes(ctx.executor, ctx.store, ctx.env, ctx.config, ctx.run_id,
                                                     probes, ctx.validation) if probes else ([], [], [], []))
    found = found + [f for f in lint_structure(ctx.env) if f.rule in by_lint]
    again = sorted({f.rule for f in found} & set(fired))
    not_run = [] if lost else _not_run(probes, coverage)
    ids = [t.trial_id for t in trials]
    checks = []
    mutants = "verifier-accepts-mutant" in fired
    other = [r for r in again if r != "verifier-accepts-mutant"]
    how = ", ".join(probes + (["the structure rules"] if by_lint else []))
    detail = (f"still fire on the candidate: {', '.join(other)}" if other else
              f"re-ran {how}: none of {', '.join(r for r in fired if r != 'verifier-accepts-mutant')} fired"
              if fired else "no registered rule fired")
    skipped = _skipped(probes, coverage)
    if skipped:
        detail += f"; {'; '.join(skipped)}"
    if unknown:
        detail += (f"; not registered, so nothing can re-check them: {', '.join(unknown)} "
                   "(core/registry/rules.py)")
    if not_run:
        detail += f"; did not run: {', '.join(not_run)}"
    if lost:
        detail += f"; could not finish: {'; '.join(lost)}"
    checks.append(GateCheck(name="rules", passed=not other and not lost and not unknown and not not_run,
                            detail=detail, trial_ids=ids))
    if mutants:
        killed = "verifier-accepts-mutant" not in again
        ev = next((f.evidence for f in found if f.rule == "verifier-accepts-mutant"), [])
        checks.append(GateCheck(name="mutants", passed=killed,
                                detail="the surviving mutants are now killed" if killed
                                else "mutants still survive: " + "; ".join(e[:200] for e in ev[:3]), trial_ids=ids))
    return checks


def _stored_exploits(ctx: _Rerun) -> GateCheck:
    """The environment's stored LLM exploits, replayed (no model) on the candidate: each must now fail."""
    stored = exploits_for_env(ctx.store, ctx.env.name)
    if not stored:
        return GateCheck(name="exploits", passed=True, detail="no stored LLM exploit for this environment")
    units = [(EXPLOIT_REPLAY, exploit_replay_args(ex, "gate-exploit-replay")) for ex in stored]
    still, ids = [], []
    for ex, (trial, why) in zip(stored, dispatch_replays(ctx.executor, ctx.store, ctx.env, ctx.config, ctx.run_id,
                                                         units)):
        if trial is None:
            still.append(f"{ex.exploit_id} could not be replayed: {why}")
            continue
        ids.append(trial.trial_id)
        if trial.outcome == Outcome.PASS:
            still.append(f"{ex.exploit_id} (found by {ex.model}) still earns reward: {_why(trial)}")
    return GateCheck(name="exploits", passed=not still, trial_ids=ids,
                     detail="; ".join(still) if still else f"{len(stored)} stored LLM exploit(s) replayed: all fail")


def _regrade(ctx: _Rerun, inputs: GateInputs) -> GateCheck:
    if inputs.request_kind == "too_easy":
        # A "make it harder" revision exists to fail passes that the old tests let through; which of them were
        # correct is what the rerun's sweep (and the human) judge. The oracle check above still has to pass.
        return GateCheck(name="regrade", passed=True,
                         detail="not replayed: a too-easy revision is meant to fail some of the parent's passes")
    passes = [t for t in inputs.parent_trials if t.purpose == "sweep" and t.outcome == Outcome.PASS
              and inputs.parent_labels.get(t.trial_id, "legitimate") not in LABEL_SKIP]
    chosen: list[tuple[TrialResult, list[str]]] = []
    cap = ctx.config.reviser.gate_replays
    for source in passes:
        if cap is not None and len(chosen) >= cap:
            break
        commands = solver_commands(source)
        if commands:
            chosen.append((source, commands))
    if not chosen:
        return GateCheck(name="regrade", passed=True, detail="no legitimate solver pass of the parent to replay")
    # each replay is a job through the executor (envqa.probes.replay_units), all of them at once
    units = [(SOLVER_REPLAY, solver_replay_args(commands, source.trial_id, "gate-regrade", i))
             for i, (source, commands) in enumerate(chosen, 1)]
    broken, ids = [], []
    for (source, _), (trial, why) in zip(chosen, dispatch_replays(ctx.executor, ctx.store, ctx.env, ctx.config,
                                                                   ctx.run_id, units)):
        if trial is None:
            broken.append(f"solver pass {source.trial_id} ({source.model}) could not be replayed: {why}")
            continue
        ids.append(trial.trial_id)
        if trial.outcome != Outcome.PASS:
            broken.append(f"solver pass {source.trial_id} ({source.model}) now {_why(trial)}")
    return GateCheck(name="regrade", passed=not broken, trial_ids=ids,
                     detail="; ".join(broken) if broken else f"{len(chosen)} legitimate solver pass(es) still pass")


def feedback(result: GateResult) -> str:
    return "\n".join(f"{c.name}: {c.detail}" for c in result.failures())
