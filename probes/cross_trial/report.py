"""One task's triage from many agents' trials (issue 33): pass@1 per agent/model with its Wilson interval
against the band, the cross-trial findings, the per-test table and the harness problems, as one JSON-able dict.

`qa analyze` prints one per task; `qa run --trials-from` puts the same dict in the run's report (`cross_trial`),
so the two ways in read alike. The verdict follows a dataset run's: findings (not info) -> "findings", a pooled
pass@1 outside the band -> "out_of_band", nothing measured -> "incomplete", else "clean". `panel` is the pool's
size and `coverage` what the rules that stayed quiet lacked (probes/cross_trial/evidence.py): on a small panel a
quiet task may only be a task too few trials could speak to. `failures` (with the task model: --tasks) is each
failed trial's kind, capability / ambiguity / brittleness / infra, and why (probes/cross_trial/failures.py).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict

from envqa.core.imported import ImportedTrial
from envqa.core.models import Finding, Outcome, Severity
from envqa.core.stats import band_of_point, summarize
from envqa.core.verdicts import combined_exit, exit_code
from envqa.probes.cross_trial.failures import failure_kinds
from envqa.probes.cross_trial.no_pass import no_pass_kind
from envqa.probes.cross_trial.probe import NOT_POOL, TaskTrials, cross_trial_findings, per_test_table


def agent_rates(
    trials: list[ImportedTrial], band: tuple[float, float], confidence: float = 0.95, ks: tuple[int, ...] = (1, 5)
) -> dict[str, dict]:
    """pass@1 per agent/model (infra left out, counted apart), oracle and the empty agent included but marked."""
    groups: dict[str, list[ImportedTrial]] = defaultdict(list)
    for t in trials:
        groups[t.agent_model].append(t)
    out = {}
    for name, ts in sorted(groups.items()):
        measured = [t for t in ts if t.outcome != Outcome.INFRA]
        passes = sum(t.outcome == Outcome.PASS for t in measured)
        stats = summarize(passes, len(measured), band, confidence, list(ks))
        out[name] = {
            **stats.model_dump(mode="json"),
            "trials": len(ts),
            "infra": len(ts) - len(measured),
            "infra_classes": sorted({t.infra_class for t in ts if t.outcome == Outcome.INFRA and t.infra_class}),
            "in_pool": ts[0].agent not in NOT_POOL,
            "call": band_of_point(passes / len(measured), band).value if measured else "unmeasured",
        }
    return out


def pooled(rates: dict[str, dict], band: tuple[float, float], confidence: float = 0.95) -> dict:
    n = sum(r["n"] for r in rates.values() if r["in_pool"])
    passes = sum(r["passes"] for r in rates.values() if r["in_pool"])
    stats = summarize(passes, n, band, confidence, [1])
    return {
        "n": n,
        "passes": passes,
        "pass_at_1": stats.pass_at_1,
        "ci_low": stats.ci_low,
        "ci_high": stats.ci_high,
        "call": band_of_point(passes / n, band).value if n else "unmeasured",
    }


def verdict(findings: list[Finding], pool: dict) -> str:
    if any(f.severity != Severity.INFO for f in findings):
        return "findings"
    if not pool["n"]:
        return "incomplete"
    return "clean" if pool["call"] == "inside" else "out_of_band"


def task_triage(
    task: TaskTrials,
    band: tuple[float, float],
    *,
    stale: list[ImportedTrial] | None = None,
    confidence: float = 0.95,
    findings: list[Finding] | None = None,
) -> dict:
    """The task's triage; `findings` given: the rules already ran (qa run), else they run here."""
    found = cross_trial_findings(task) if findings is None else findings
    rates = agent_rates(list(task.trials.values()), band, confidence)
    pool = pooled(rates, band, confidence)
    harness = [f.message for f in found if f.rule == "agent-never-ran"]
    panel = task.panel()
    failures = failure_kinds(task)
    return {
        "task": task.task,
        "trials": len(task.trials),
        "stale": len(stale or []),
        "band": list(band),
        "pooled": pool,
        "agents": rates,
        "findings": [f.public() for f in found],
        "tests": per_test_table(task),
        "harness_problems": harness,
        "panel": asdict(panel),
        "coverage": task.coverage.lines(panel, {f.rule for f in found}),
        "no_pass": no_pass_kind(task.trials, task.pool(), found, failures),
        "failures": failures,
        "verdict": verdict(found, pool),
    }


def dataset_exit(triages: list[dict]) -> int:
    """As a dataset run: 1 when any task has findings or is out of band, else 3 when any could not be measured."""
    return combined_exit(exit_code(t["verdict"]) for t in triages)
