"""The cross-trial rules on a version's trials, qa's own and imported alike (issue 33).

An imported trial's neutral record is its sidecar (core/imported_trials.py). A trial qa ran itself is read into
the same shape from its folder, which is Harbor-shaped: `agent/trajectory.json` (ATIF, our writer) for the
steps, and `verifier/ctrf.json` or pytest's `-rA` summary in `verifier/test-stdout.txt` for the tests. qa's
solver trials are identified as `qa-solver/<model>`; the oracle and nop keep their names, so the empty agent's
fail-to-pass tests and the reference solution stay out of the pool as they do for imported runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import structlog

from envqa.core.errors import EnvQAError
from envqa.core.imported import ImportedTrial, TestOutcome, TrajectoryStep
from envqa.core.imported_trials import read_sidecar
from envqa.core.models import Finding, TrialResult
from envqa.core.readers.common import pytest_summary, read_text
from envqa.core.task_model import tests_of
from envqa.core.task_model.unstated_checks import TestChecks, checks_by_test
from envqa.probes.analyst.trace_view import load_trajectory
from envqa.probes.cross_trial.probe import TaskTrials, cross_trial_findings

log = structlog.get_logger()

AGENTS = ("solver", "oracle", "nop")  # the trials whose outcomes are about the task (not probes, not exploits)
CTRF_STATUS = {"passed": "passed", "failed": "failed", "skipped": "skipped", "pending": "skipped", "other": "error"}


def _ctrf(path: Path) -> list[TestOutcome]:
    try:
        tests = json.loads(path.read_text(errors="replace"))["results"]["tests"]
        return [
            TestOutcome(
                name=str(t["name"]),
                status=CTRF_STATUS.get(t.get("status"), "error"),
                message=str(t.get("trace") or t.get("message") or "")[:2000],
            )
            for t in tests
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _tests(trial_dir: Path) -> list[TestOutcome]:
    ctrf = trial_dir / "verifier" / "ctrf.json"
    if ctrf.is_file():
        return _ctrf(ctrf)
    out = trial_dir / "verifier" / "test-stdout.txt"
    return pytest_summary(read_text(out, tail_bytes=2 * 1024 * 1024)) if out.is_file() else []


def _steps(trial_dir: Path) -> list[TrajectoryStep]:
    traj = load_trajectory(trial_dir)
    if traj is None:
        return []
    out = []
    for s in traj.steps:
        calls = s.tool_calls or []
        commands = [
            c.arguments["command"]
            if isinstance(c.arguments.get("command"), str) and c.function_name == "bash"
            else json.dumps(c.arguments, sort_keys=True)
            for c in calls
        ]
        seen = "\n".join(r.content for r in (s.observation.results if s.observation else []))
        out.append(
            TrajectoryStep(
                step_id=s.step_id, source=s.source, message=s.message or "", commands=commands, observation=seen[:4000]
            )
        )
    return out


def neutral_trial(result: TrialResult, task_name: str) -> ImportedTrial:
    """The trial in the neutral shape: its sidecar when imported, else read from qa's own trial folder."""
    imported = read_sidecar(result.artifacts_dir) if result.source == "imported" else None
    if imported is not None:
        return imported
    trial_dir = Path(result.artifacts_dir or "")
    agent = "qa-solver" if result.agent == "solver" else result.agent
    return ImportedTrial(
        source_format="harbor",
        path=str(trial_dir),
        trial_name=result.trial_id,
        job_name=result.run_id,
        task_name=task_name,
        agent=agent,
        model=result.model if result.agent == "solver" else None,
        outcome=result.outcome,
        reward=result.reward,
        rewards=result.rewards,
        infra_class=result.error_class,
        error_message=result.error_message,
        agent_timed_out=result.agent_timed_out,
        tests=_tests(trial_dir) if result.artifacts_dir else [],
        steps=_steps(trial_dir) if result.artifacts_dir else [],
        step_results=result.step_results,
    )


def verifier_tools(env) -> set[str]:
    """The commands the task's verifier scripts run (a replaced one is tampering): the test model's
    (core/task_model/tests_reader.py `script_tools`)."""
    return set(tests_of(env).script_tools)


def version_task_trials(env, trials: list[TrialResult], *, include_stale: bool = False) -> TaskTrials:
    """The version's trials the rules read: solver (qa's and imported; stale ones only with `include_stale`),
    oracle, nop."""
    keep = [t for t in trials if t.agent in AGENTS and (include_stale or not (t.provenance and t.provenance.stale))]
    return TaskTrials(
        task=env.name,
        trials={t.trial_id: neutral_trial(t, env.name) for t in keep},
        instruction=env.instruction,
        verifier_tools=verifier_tools(env),
        checks=task_checks(env),
    )


def task_checks(env) -> dict[str, TestChecks] | None:
    """Each test's checks and what they require unstated, which `qa run` and `qa analyze --tasks` read the failures
    against (probes/cross_trial/failures.py); None when the model cannot be read (the rules then work from the
    trials alone)."""
    try:
        return checks_by_test(env)
    except (EnvQAError, OSError, ValueError) as e:
        log.warning("cross_trial.checks_unread", task=env.name, error=str(e)[:200])
        return None


def version_findings(env, trials: list[TrialResult]) -> list[Finding]:
    """The cross-trial findings of the trials the sweep counted (a stale one only with --count-stale); [] with
    fewer than two solver trials."""
    if sum(t.agent == "solver" for t in trials) < 2:
        return []
    return cross_trial_findings(version_task_trials(env, trials, include_stale=True))  # the sweep counted them
