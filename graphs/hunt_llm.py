"""The LLM shortcut hunter's part of the hunt node, and the replay of stored regression exploits.

`[hunter] trials` hunter trials per version run on `[hunter] model`'s queue through the executor (so
parking, limits and budget apply as for the sweep). Every pass is replayed from its own commands under
strace (no model; each replay is a job through the executor, envqa.probes.replay_units) and labelled: a shortcut the
trace proves is a deterministic label; otherwise the analyst model judges it (graphs/analyze.label_trials). A pass
labelled `shortcut` becomes an `llm-exploit` finding with the transcript as evidence and is stored as a regression
exploit of the environment.

Exploits stored by earlier versions or runs of the same environment are replayed on the current version
first: one that still earns reward is an `llm-exploit` finding again (the hole was not closed).
"""

from __future__ import annotations

import structlog

from envqa.core.environment import Environment
from envqa.core.models import Finding, Outcome, TrialLabel, TrialResult, TrialSpec
from envqa.core.run_deps import RunDeps
from envqa.graphs.analyst_dispatch import budget_reached
from envqa.graphs.analyze import label_trials, version_rollup
from envqa.probes.analyst.rules import context_for, strace_shortcut
from envqa.probes.analyst.trace_view import load_trajectory
from envqa.probes.base import ProbeContext
from envqa.probes.dispatch import dispatch_replays
from envqa.probes.exploits.regression import RegressionExploit, exploits_for_env, save_exploit, transcript_of
from envqa.probes.replay_units import EXPLOIT_REPLAY, SOLVER_REPLAY, exploit_replay_args, solver_replay_args
from envqa.probes.solver_passes import solver_commands

log = structlog.get_logger(__name__)
RULE = "llm-exploit"


def _finding(message: str, evidence: list[str], trial_ids: list[str]) -> Finding:
    return Finding.of(
        rule=RULE,
        message=message,
        evidence=evidence,
        location="tests/test.sh",
        trial_ids=trial_ids,
    )


def _replays(deps: RunDeps, ctx: ProbeContext, units: list[tuple[str, dict]]) -> list[TrialResult | None]:
    """Replays as jobs through the executor (envqa.probes.replay_units), all at once; each recorded trial
    joins the hunt's own (ctx.new_trials), like a probe's. None where a job gave up."""
    replies = dispatch_replays(deps.executor, deps.store, ctx.env, ctx.config, ctx.run_id, units)
    for trial, why in replies:
        if trial is None:
            log.warning("hunt.replay_lost", reason=why)
        else:
            ctx.new_trials.append(trial)
    return [trial for trial, _why in replies]


def replay_stored(deps: RunDeps, ctx: ProbeContext, env: Environment) -> list[Finding]:
    """Stored exploits of this environment (other versions, earlier runs), replayed here; the ones that still
    earn reward. One this very hunt found on this version is not replayed again."""
    stored = [
        ex
        for ex in exploits_for_env(deps.store, env.name)
        if not (ex.found_in_version == env.version and ex.found_in_run == ctx.run_id)
    ]
    trials = _replays(
        deps, ctx, [(EXPLOIT_REPLAY, exploit_replay_args(ex, "hunt-exploit-regression")) for ex in stored]
    )
    findings = []
    for ex, trial in zip(stored, trials):
        if trial is not None and trial.outcome == Outcome.PASS:
            findings.append(
                _finding(
                    f"a stored LLM exploit ({ex.exploit_id}, found by {ex.model} in version {ex.found_in_version[:12]}) "
                    f"still earns reward on this version",
                    [f"replay trial {trial.trial_id} earned reward {trial.reward:g}", f"transcript:\n{ex.transcript}"],
                    [trial.trial_id],
                )
            )
    return findings


def run_hunter(deps: RunDeps, state, ctx: ProbeContext, env: Environment) -> tuple[list[Finding], list[TrialResult]]:
    """Hunter trials, their replays and labels; returns (findings, every new trial)."""
    settings = deps.config.hunter
    findings = replay_stored(deps, ctx, env)
    if not settings.model or settings.trials <= 0:
        ctx.skip("llm_hunter", "no [hunter] model configured (--hunter-model): scripted exploits only")
        return findings, []
    if ctx.passed("nop"):
        ctx.skip("llm_hunter", "nop already passes: the verifier accepts doing nothing")
        return findings, []

    reached = budget_reached(deps.config, deps.store, list(ctx.validation))
    if reached:
        ctx.skip("llm_hunter", "budget reached, no hunter trial started: " + "; ".join(reached))
        return findings, []
    specs = [
        TrialSpec(
            run_id=state["run_id"],
            env_version=env.version,
            agent="hunter",
            model=settings.model,
            index=i,
            purpose="hunt-llm",
        )
        for i in range(settings.trials)
    ]
    results = deps.executor.run(env, specs)
    label_ctx = context_for(env, list(ctx.validation) + results, [])
    passes = [
        (i, r, commands)
        for i, r in enumerate(results)
        if (commands := solver_commands(r) if r.outcome == Outcome.PASS else [])
    ]
    trials = _replays(
        deps,
        ctx,
        [
            (SOLVER_REPLAY, solver_replay_args(commands, r.trial_id, "hunt-llm-replay", i, trace=True))
            for i, r, commands in passes
        ],
    )
    replays: list[TrialResult] = []
    for (_i, r, _commands), trial in zip(passes, trials):
        if trial is None:
            continue
        replays.append(trial)
        proven = strace_shortcut(trial, label_ctx) if trial.outcome == Outcome.PASS else None
        if proven is not None:
            proven = proven.model_copy(
                update={
                    "trial_id": r.trial_id,
                    "explanation": (f"replayed without the model as {trial.trial_id}: {proven.explanation}"),
                }
            )
            deps.store.save_label(state["run_id"], proven, r.env_version, r.model)
    invalid = [r for r in results if _never_acted(r)]
    note = (
        (
            f"; {len(invalid)} of them got no valid action from the model at any step (no tool call or bash "
            "block, or arguments that are not JSON): the hunter's answer was invalid and the hunt went on "
            "without it"
        )
        if invalid
        else ""
    )
    ctx.ran("llm_hunter", f"{len(results)} hunter trial(s) on {settings.model}, {len(replays)} pass(es) replayed{note}")
    return findings, [*results, *replays]


def _never_acted(trial: TrialResult) -> bool:
    """A hunter trial whose model answered every step with no action (no tool call; in text mode no single bash
    block, recorded without a call) or tool arguments that are not a JSON object: it never acted."""
    trajectory = load_trajectory(trial.artifacts_dir)
    steps = [s for s in (trajectory.steps if trajectory else []) if s.source == "agent"]

    def invalid(step) -> bool:
        results = step.observation.results if step.observation else []
        if not step.tool_calls:
            return True
        return bool(results) and all("not a JSON object" in r.content or "not valid JSON" in r.content for r in results)

    return bool(steps) and all(invalid(s) for s in steps)


def exploit_findings(
    deps, state, env: Environment, hunter_trials: list[TrialResult], labels: dict[str, TrialLabel]
) -> list[Finding]:
    """Hunter passes labelled shortcut: `llm-exploit` findings, stored as regression exploits."""
    findings = []
    for r in hunter_trials:
        label = labels.get(r.trial_id)
        if r.agent != "hunter" or r.outcome != Outcome.PASS or label is None or label.label != "shortcut":
            continue
        trajectory = load_trajectory(r.artifacts_dir)
        transcript = transcript_of(trajectory)
        ex: RegressionExploit = save_exploit(
            deps.store,
            env_name=env.name,
            run_id=state["run_id"],
            version=env.version,
            source_trial_id=r.trial_id,
            model=r.model,
            subtype=label.subtype,
            commands=solver_commands(r),
            transcript=transcript,
        )
        evidence = [
            f"hunter trial {r.trial_id} ({r.model}) earned reward {r.reward:g}: {label.subtype}: {label.explanation}",
            *[c.quote if c.step_id is None else f"[step {c.step_id}] {c.quote}" for c in label.evidence],
            f"transcript:\n{transcript}",
            f"stored as regression exploit {ex.exploit_id}",
        ]
        findings.append(
            _finding(
                f"the LLM shortcut hunter earned reward without doing the task ({label.subtype})",
                evidence,
                [r.trial_id],
            )
        )
    return findings


def hunt_llm_and_label(
    deps, state, ctx: ProbeContext, env: Environment, findings: list[Finding]
) -> tuple[list[Finding], list[TrialResult], dict]:
    """Called by the hunt node after the probes: the hunter, then a label for every trial of the version
    (the probes' and the hunter's are new; sweep passes may now be proven shortcuts by their replays).
    Returns (new findings, the hunter's trials run through the executor, the version's label roll-up)."""
    new_findings, trials = run_hunter(deps, state, ctx, env)
    by_executor = [t for t in trials if all(t.trial_id != n.trial_id for n in ctx.new_trials)]
    everything = [*ctx.validation, *ctx.new_trials, *by_executor]
    known = [Finding.model_validate(f) for f in state.get("findings", []) or []] + findings + new_findings
    labels = label_trials(deps, state["run_id"], env, everything, known, siblings=everything)
    new_findings += exploit_findings(deps, state, env, by_executor, labels)
    return new_findings, by_executor, version_rollup(deps, state["run_id"], everything)
