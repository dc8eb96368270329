"""The validation gate: a candidate version must prove itself before any human sees it.

The gate judges the *proposal*: what it addresses must be gone, and it must make nothing worse. A rule
the parent fired that the proposal does not address may remain; it is re-checked and listed as still open
(`GateResult.still_open`), never a reason to drop a correct fix for another rule.

Checks, in order (a failed check stops the ones that need what it proves):
  lint       the file rules (structure and static) the proposal addresses no longer fire on the candidate,
             and no file rule fires that did not fire on the parent
  build      the candidate's image builds
  oracle     oracle x k passes; nop fails (through the executor, like every trial). When the parent's
             oracle already failed (oracle-fails), the result's `notice` says so first: no fix can pass
             until the reference solution works
  rules      every rule that fired on the parent is re-checked the way the rule registry says
             (core/registry/rules.py: its probe's `recheck`; graphs/gate_rules.py); each probe is a job through the executor
             (envqa.probes.dispatch), like the hunt's. An addressed rule must stay silent (exploits must
             fail), and it must have been re-checked: unregistered, or its probe did not run, fails. A rule
             the re-run probes find that the parent did not fire (error or worse) fails: the patch added it
  mutants    surviving mutants are now killed (when the proposal addresses verifier-accepts-mutant)
  exploits   every LLM exploit stored for this environment (the hunter's passes, by any earlier version or
             run), replayed without the model: each must fail when the proposal targets them (llm-exploit)
             or the parent had them closed, so a closed hole stays closed in every later revision; when
             the parent still fires llm-exploit and the proposal leaves it alone, they are listed as open
  regrade    every legitimate solver pass of the parent, replayed from its trajectory without the model,
             still passes: a patch that breaks correct solutions is stopped here

Addresses: the rules a proposal says it fixes (a fixer family's registered rules it acted on; the LLM
reviser's `addresses`). An empty list (a human edit) addresses every rule the parent fired.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from envqa.core.config import QAConfig
from envqa.core.environment import Environment
from envqa.core.models import Finding, GateCheck, GateResult, Outcome, TrialResult, TrialSpec
from envqa.core.registry import SKIP_ON_REGRADE, get_rule, is_registered
from envqa.core.sandbox import ImageBuildError, SandboxBackend
from envqa.graphs.gate_rules import Rerun, fired_rules, rules_checks
from envqa.probes.dispatch import dispatch_replays
from envqa.probes.exploits.regression import exploits_for_env
from envqa.probes.replay_units import EXPLOIT_REPLAY, SOLVER_REPLAY, exploit_replay_args, solver_replay_args
from envqa.probes.solver_passes import solver_commands
from envqa.probes.static.findings import static_findings
from envqa.probes.static.lint import lint_structure

log = structlog.get_logger(__name__)

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
    parent: Environment | None = None  # the parent version: a file rule it fires already is not new


def _known_before(inputs: GateInputs) -> set[str]:
    """Rules that count as already there: the parent's findings, and its file rules read afresh (the findings
    handed in may be a subset, e.g. only the actionable ones)."""
    known = {f.rule for f in inputs.parent_findings}
    if inputs.parent is not None:
        known |= {f.rule for f in static_findings(inputs.parent) + lint_structure(inputs.parent)}
    return known


ORACLE_BROKEN = "oracle-fails"
ORACLE_NOTICE = (
    "the reference solution fails (oracle-fails): no fix can pass the gate until solution/ "
    "passes the task's own tests; fix the oracle first"
)
LLM_EXPLOIT = "llm-exploit"


def addressed_rules(inputs: GateInputs) -> set[str]:
    """The parent's rules this proposal must silence: its `addresses`, or every fired rule when it names none."""
    fired = set(fired_rules(inputs.parent_findings))
    return set(inputs.addresses) or fired


def oracle_notice(findings: list[Finding]) -> str:
    return ORACLE_NOTICE if any(f.rule == ORACLE_BROKEN for f in findings) else ""


def run_gate(config: QAConfig, backend: SandboxBackend, executor, store, inputs: GateInputs) -> GateResult:
    """Every trial goes through `executor` (progress events come from its own sink)."""
    result = _run_gate(config, backend, executor, store, inputs)
    result.notice = oracle_notice(inputs.parent_findings)
    oracle = next((c for c in result.checks if c.name == "oracle"), None)
    if result.notice and oracle is not None and not oracle.passed:
        result.checks.insert(0, GateCheck(name="notice", passed=False, detail=result.notice))
    return result


def _lint_check(env: Environment, inputs: GateInputs) -> tuple[GateCheck, list[str]]:
    """(the check, the unaddressed parent file rules that still fire)."""
    fixing, fired = addressed_rules(inputs), set(fired_rules(inputs.parent_findings))
    now = {f.rule: f for f in static_findings(env) + lint_structure(env)}
    still = sorted(fixing & set(now))
    known = _known_before(inputs)
    new = sorted(r for r, f in now.items() if r not in known and f.severity != "info")
    problems = ([f"still fires: {', '.join(still)}"] if still else []) + (
        [f"new on the candidate: {', '.join(new)}"] if new else []
    )
    detail = "; ".join(problems) if problems else "the addressed static rules are silent and none is new"
    return GateCheck(name="lint", passed=not problems, detail=detail), sorted((fired - fixing) & set(now))


def _run_gate(config: QAConfig, backend: SandboxBackend, executor, store, inputs: GateInputs) -> GateResult:
    env, checks = inputs.candidate, []
    lint, open_files = _lint_check(env, inputs)
    checks.append(lint)
    try:
        tag, built = backend.ensure_image(env)
        if built:
            store.record_build(tag, env.version)
        checks.append(GateCheck(name="build", passed=True, detail=f"image {tag}" + (" built" if built else " cached")))
    except ImageBuildError as e:
        checks.append(GateCheck(name="build", passed=False, detail=f"the image does not build: {e}"))
        return GateResult(passed=False, checks=checks)
    k = config.oracle_runs_for("gate")
    specs = [
        TrialSpec(run_id=inputs.run_id, env_version=env.version, agent="oracle", index=i, purpose="gate")
        for i in range(k)
    ] + [TrialSpec(run_id=inputs.run_id, env_version=env.version, agent="nop", purpose="gate")]
    results = executor.run(env, specs)
    oracle = [r for r in results if r.agent == "oracle"]
    nop = [r for r in results if r.agent == "nop"]
    bad_oracle = [r for r in oracle if r.outcome != Outcome.PASS]
    checks.append(
        GateCheck(
            name="oracle",
            passed=not bad_oracle,
            detail=f"{len(oracle) - len(bad_oracle)}/{len(oracle)} oracle runs passed"
            + (f"; failed: {_why(bad_oracle[0])}" if bad_oracle else ""),
            trial_ids=[r.trial_id for r in oracle],
        )
    )
    checks.append(
        GateCheck(
            name="nop",
            passed=all(r.outcome == Outcome.FAIL for r in nop),
            detail="nop fails" if all(r.outcome == Outcome.FAIL for r in nop) else f"nop did not fail: {_why(nop[0])}",
            trial_ids=[r.trial_id for r in nop],
        )
    )
    if bad_oracle:
        return GateResult(passed=False, checks=checks, still_open=open_files)
    rerun = Rerun(env, _focused(config, inputs.parent_findings), inputs.run_id, results, executor, store)
    parent_fired = fired_rules(inputs.parent_findings)
    rules, open_probes = rules_checks(rerun, parent_fired, addressed_rules(inputs), lambda: _known_before(inputs))
    # a stored exploit must fail when the proposal targets it, and when the parent had it closed (a patch that
    # re-opens a closed hole adds a rule); one the parent still fires and the proposal leaves alone stays open
    must_fail = LLM_EXPLOIT in addressed_rules(inputs) or LLM_EXPLOIT not in fired_rules(inputs.parent_findings)
    exploits, open_exploits = _stored_exploits(rerun, must_fail)
    checks += rules + [exploits, _regrade(rerun, inputs)]
    still_open = sorted(set(open_files) | set(open_probes)) + open_exploits
    return GateResult(passed=all(c.passed for c in checks), checks=checks, still_open=still_open)


def _why(r: TrialResult) -> str:
    return f"trial {r.trial_id} {r.outcome.value} reward={r.reward}" + (
        f" ({r.error_class}: {r.error_message})" if r.error_class else ""
    )


def _focused(config: QAConfig, findings: list[Finding]) -> QAConfig:
    """The config for re-running the parent's rules: only the exploits that fired, gate-sized oracle runs."""
    exploits = sorted({f.rule for f in findings if is_registered(f.rule) and get_rule(f.rule).probe == "exploits"})
    probes = config.probes.model_copy(
        update={"exploits": exploits or config.probes.exploits, "oracle_runs": config.oracle_runs_for("gate")}
    )
    return config.model_copy(update={"probes": probes})


def _stored_exploits(ctx: Rerun, targeted: bool) -> tuple[GateCheck, list[str]]:
    """The environment's stored LLM exploits, replayed (no model) on the candidate. When the proposal targets
    them (addresses llm-exploit) each must now fail; otherwise one that still earns reward stays open."""
    stored = exploits_for_env(ctx.store, ctx.env.name)
    if not stored:
        return GateCheck(name="exploits", passed=True, detail="no stored LLM exploit for this environment"), []
    units = [(EXPLOIT_REPLAY, exploit_replay_args(ex, "gate-exploit-replay")) for ex in stored]
    still, ids = [], []
    for ex, (trial, why) in zip(
        stored, dispatch_replays(ctx.executor, ctx.store, ctx.env, ctx.config, ctx.run_id, units)
    ):
        if trial is None:
            still.append(f"{ex.exploit_id} could not be replayed: {why}")
            continue
        ids.append(trial.trial_id)
        if trial.outcome == Outcome.PASS:
            still.append(f"{ex.exploit_id} (found by {ex.model}) still earns reward: {_why(trial)}")
    if still and not targeted:
        return GateCheck(
            name="exploits",
            passed=True,
            trial_ids=ids,
            detail="not targeted by this proposal, still open: " + "; ".join(still),
        ), [f"{LLM_EXPLOIT} ({len(still)} stored exploit(s) still earn reward)"]
    return GateCheck(
        name="exploits",
        passed=not still,
        trial_ids=ids,
        detail="; ".join(still) if still else f"{len(stored)} stored LLM exploit(s) replayed: all fail",
    ), []


def _regrade(ctx: Rerun, inputs: GateInputs) -> GateCheck:
    if inputs.request_kind == "too_easy":
        # A "make it harder" revision exists to fail passes that the old tests let through; which of them were
        # correct is what the rerun's sweep (and the human) judge. The oracle check above still has to pass.
        return GateCheck(
            name="regrade",
            passed=True,
            detail="not replayed: a too-easy revision is meant to fail some of the parent's passes",
        )
    passes = [
        t
        for t in inputs.parent_trials
        if t.purpose == "sweep"
        and t.outcome == Outcome.PASS
        and inputs.parent_labels.get(t.trial_id, "legitimate") not in LABEL_SKIP
    ]
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
    units = [
        (SOLVER_REPLAY, solver_replay_args(commands, source.trial_id, "gate-regrade", i))
        for i, (source, commands) in enumerate(chosen, 1)
    ]
    broken, ids = [], []
    for (source, _), (trial, why) in zip(
        chosen, dispatch_replays(ctx.executor, ctx.store, ctx.env, ctx.config, ctx.run_id, units)
    ):
        if trial is None:
            broken.append(f"solver pass {source.trial_id} ({source.model}) could not be replayed: {why}")
            continue
        ids.append(trial.trial_id)
        if trial.outcome != Outcome.PASS:
            broken.append(f"solver pass {source.trial_id} ({source.model}) now {_why(trial)}")
    return GateCheck(
        name="regrade",
        passed=not broken,
        trial_ids=ids,
        detail="; ".join(broken) if broken else f"{len(chosen)} legitimate solver pass(es) still pass",
    )


def feedback(result: GateResult) -> str:
    lines = [result.notice] if result.notice else []
    lines += [f"{c.name}: {c.detail}" for c in result.failures() if c.name != "notice"]
    if result.still_open:
        lines.append(f"still open (not addressed): {', '.join(result.still_open)}")
    return "\n".join(lines)
