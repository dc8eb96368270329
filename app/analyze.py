"""`qa analyze PATH... [--tasks DATASET]`: the runs people already have, triaged with no Docker at all (issue 33).

Harbor jobs and `tb run` folders are read (core/readers), each trial matched to its task by name (with
`--tasks`, to the task folders of that dataset, with stale trials apart), and per task the cross-trial rules and
pass@1 per agent/model against the band are computed (probes/cross_trial/report.py). With `--tasks`, the trials
are also stored, as solver trials of each task's version (source = imported; stored once, so analysing the same
folders again adds nothing), each task's static findings (`qa lint`'s, warning and above) join its triage, and
each failing test is read against its checks in the task model (probes/cross_trial/failures.py).
The result is one JSON-able document; app/analyze_output.py renders it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from envqa.core.config import QAConfig
from envqa.core.errors import EnvQAError
from envqa.core.import_match import Matching, TaskMatch, dataset_tasks, match_trials
from envqa.core.imported import ImportedTrial, ImportProblem
from envqa.core.imported_trials import as_trial_result, imported_trial_id
from envqa.core.layout import RunLayout
from envqa.core.models import Finding, Severity
from envqa.core.readers import iter_runs
from envqa.core.readers.harbor_job import read_job
from envqa.core.task_model.unstated_checks import TestChecks
from envqa.graphs.imported import keep_files
from envqa.probes.cross_trial.no_pass import no_pass_table
from envqa.probes.cross_trial.probe import TaskTrials, cross_trial_findings, recorded_instruction
from envqa.probes.cross_trial.report import dataset_exit, task_triage
from envqa.probes.cross_trial.triage import look_first, sibling_shortcuts, worst_first

log = structlog.get_logger(__name__)
SCHEMA_VERSION = 1


def read_all(
    paths: list[Path], on_trial: Callable[[int], None] = lambda n: None
) -> tuple[list[ImportedTrial], list[ImportProblem]]:
    trials, problems = [], []
    for item in iter_runs(paths):
        if isinstance(item, ImportedTrial):
            trials.append(item)
            on_trial(len(trials))
        else:
            problems.append(item)
    return trials, problems


def groups(trials: list[ImportedTrial]) -> list[dict]:
    """Each group: its trials, which rule named it ("agent+model" where the model is known, else "job folder":
    the agent in its job, core/readers/groups.py) and where its agent and model names came from."""
    out: dict[str, dict] = {}
    for t in trials:
        rule = t.group_rule
        g = out.setdefault(
            t.agent_model,
            {
                "group": t.agent_model,
                "trials": 0,
                "rule": rule,
                "named_by": f"agent+model from {t.model_source or 'the record'}" if rule == "agent+model" else rule,
                "job": t.job_label if rule == "job folder" else None,
                "agent_from": t.agent_source,
                "model_from": t.model_source,
            },
        )
        g["trials"] += 1
    return sorted(out.values(), key=lambda g: g["group"])


def job_counts(trials: list[ImportedTrial]) -> tuple[list[dict], list[ImportProblem]]:
    """What Harbor counted for each job the trials came from (`<job>/result.json`): a job still running or with
    trials pending is said, since its pass rates count only what was written. A broken file is one problem."""
    jobs: dict[str, str] = {}
    for t in trials:
        if t.source_format == "harbor" and t.job_path:
            jobs.setdefault(t.job_path, t.job_label)
    out, problems = [], []
    for path, label in sorted(jobs.items()):
        job, problem = read_job(Path(path), label)
        if problem is not None:
            problems.append(problem)
        if job is not None:
            out.append({**job.model_dump(), "unfinished": job.unfinished})
    return out, problems


def never_ran(trials: list[ImportedTrial]) -> list[dict]:
    """Agents that never ran (infra, out of every pass rate), by group: how many trials, and a few of them."""
    out: dict[str, list[str]] = {}
    for t in trials:
        if t.infra_class == "agent-never-ran":
            out.setdefault(t.agent_model, []).append(t.trial_name)
    return [{"group": g, "trials": len(ns), "examples": ns[:3]} for g, ns in sorted(out.items())]


@dataclass
class TaskContext:
    """What a task on disk gives its triage: the instruction, the verifier's tools, the static findings (warning or
    above: what `qa lint` would report) and each test's checks with what they require unstated (the failures are
    read against them: probes/cross_trial/failures.py); empty, checks None, when there is no task or it is
    unreadable (the rules then work from the trials alone)."""

    instruction: str = ""
    tools: set[str] = field(default_factory=set)
    static: list[Finding] = field(default_factory=list)
    checks: dict[str, TestChecks] | None = None


def _task_context(task_dir: Path | None) -> TaskContext:
    if task_dir is None:
        return TaskContext()
    from envqa.core.environment import load_environment
    from envqa.probes.cross_trial.qa import task_checks, verifier_tools
    from envqa.probes.static.task_schema import lint_findings

    try:
        env = load_environment(task_dir)
    except (EnvQAError, OSError, ValueError) as e:
        log.warning("analyze.task_unreadable", task=str(task_dir), error=str(e)[:200])
        return TaskContext()
    static = [f for f in lint_findings(env) if f.severity != Severity.INFO]
    return TaskContext(env.instruction, verifier_tools(env), static, task_checks(env))


def triage_matching(matching: Matching, config: QAConfig, count_stale: bool = False) -> list[dict]:
    sw = config.sweep
    band = (sw.band_low, sw.band_high)
    out = []
    for name, m in sorted(matching.tasks.items()):
        counted = m.current + (m.stale if count_stale else [])
        ctx = _task_context(m.task_dir)
        task = TaskTrials(
            task=name,
            trials={imported_trial_id(t): t for t in counted},
            instruction=ctx.instruction or recorded_instruction(counted),
            verifier_tools=ctx.tools,
            checks=ctx.checks,
        )
        found = cross_trial_findings(task) + ctx.static
        triage = task_triage(
            task, band, stale=[] if count_stale else m.stale, confidence=sw.report_confidence, findings=found
        )
        out.append({**triage, "path": str(m.task_dir) if m.task_dir else None})
    return out


def panel_summary(triages: list[dict]) -> dict:
    """The analysis's panel (the most setups and trials any task's pool had) and how many tasks stayed quiet with a
    rule short of evidence: on a small panel, quiet is often "too few trials to say"."""
    panels = [t["panel"] for t in triages if t.get("panel")]
    quiet = [
        t["task"] for t in triages if t.get("coverage") and not any(f["severity"] != "info" for f in t["findings"])
    ]
    return {
        "setups": max((p["setups"] for p in panels), default=0),
        "trials_per_task": max((p["trials"] for p in panels), default=0),
        "quiet_short_of_evidence": len(quiet),
        "examples": quiet[:5],
    }


def store_imported(config: QAConfig, paths: list[Path], matching: Matching, count_stale: bool) -> dict:
    """Record every matched trial as a solver trial of its task's version; returns {"added", "kept"}."""
    from envqa.store.db import Store
    from envqa.store.versions import VersionStore

    key = "|".join(sorted(os.path.abspath(p) for p in paths))
    run_id = f"analyze-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    store = Store(config.db_path)
    versions = VersionStore(config, store)
    layout = RunLayout(config.runs_dir, run_id)
    added = kept = 0
    for m in matching.tasks.values():
        if m.task_dir is None:
            continue
        try:
            version = versions.snapshot(m.task_dir, run_id=run_id).version
        except (EnvQAError, OSError, ValueError, RuntimeError) as e:
            log.warning("analyze.not_stored", task=str(m.task_dir), error=str(e)[:200])
            continue
        store.create_run(run_id, str(m.task_dir))
        for t, stale in _with_stale(m, count_stale):
            tid = imported_trial_id(t)
            if store.get_trial(tid) is not None:
                kept += 1
                continue
            trial_dir = layout.trial_dir(tid)
            keep_files(trial_dir, t)
            added += store.record_trial(as_trial_result(t, run_id, version, stale=stale, artifacts_dir=str(trial_dir)))
    if store.get_run(run_id) is not None:
        store.finish_run(run_id, "imported", {"run_id": run_id, "imported_from": [str(p) for p in paths]}, [])
    return {"run_id": run_id, "added": added, "already_stored": kept}


def _with_stale(m: TaskMatch, count_stale: bool) -> list[tuple[ImportedTrial, bool]]:
    return [(t, False) for t in m.current] + [(t, not count_stale) for t in m.stale]


def analyze(
    paths: list[Path],
    config: QAConfig,
    *,
    tasks: list[Path] | None = None,
    count_stale: bool = False,
    store: bool = True,
    on_trial: Callable[[int], None] = lambda n: None,
) -> dict:
    """The whole `qa analyze` document: per task the triage, plus what could not be read or matched."""
    trials, problems = read_all(paths, on_trial)
    jobs, job_problems = job_counts(trials)
    problems += job_problems
    matching = match_trials(trials, dataset_tasks(tasks) if tasks else None)
    triages = triage_matching(matching, config, count_stale)
    sibling_shortcuts(triages)
    triages = worst_first(triages)
    stored = store_imported(config, paths, matching, count_stale) if tasks and store else None
    exit_code = dataset_exit(triages) if triages else (2 if problems else 3)
    return {
        "schema_version": SCHEMA_VERSION,
        "paths": [str(p) for p in paths],
        "tasks_dir": [str(t) for t in tasks or []],
        "trials": len(trials),
        "unreadable_trials": sum(p.lost_trial for p in problems),
        "band": [config.sweep.band_low, config.sweep.band_high],
        "groups": groups(trials),
        "jobs": jobs,
        "never_ran": never_ran(trials),
        "look_first": look_first(triages),
        "no_pass": no_pass_table(triages),
        "panel": panel_summary(triages),
        "tasks": triages,
        "problems": [p.model_dump() for p in problems],
        "unmatched": matching.unmatched,
        "stale_notes": matching.stale_notes(),
        "stored": stored,
        "exit_code": exit_code,
    }
