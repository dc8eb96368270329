"""The decide node: is the current version done, and if not, what kind of revision should be asked for?

It reads the sweep (pass@1 with its Wilson interval, per model and pooled, against the band), the current
version's open findings, the trial labels, and the run's caps (iterations, USD/tokens/trials over the
whole run, wall time). It ends the loop when the version is clean and in band (or clean with no band to
measure: no solver models), when a cap is reached or the run could not finish; otherwise it writes a
revision request for `revise`. Either way it records why, and stores the version's findings and figures
(the store is the one truth the report's `versions` key is built from).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import structlog
from pydantic import BaseModel

from envqa.core.models import Finding, Outcome, Severity, utcnow
from envqa.core.registry import FAILURE_MEANS_BROKEN  # ambiguity, brittleness (the label registry)
from envqa.core.run_deps import RunDeps
from envqa.core.stats import band_of_interval, band_of_point
from envqa.graphs.spend import run_budget

log = structlog.get_logger(__name__)

# fix_labels: in band, but the version's trace labels agree on a problem (ambiguity, brittleness, shortcut)
RequestKind = Literal["fix_findings", "fix_labels", "too_easy", "broken", "too_hard"]


class Request(BaseModel):
    kind: RequestKind
    detail: str


def band_measure(sweep: dict | None) -> dict:
    """Pooled and per-model pass@1 against the band; `in_band` is None when nothing was measured."""
    if not sweep or not sweep.get("overall", {}).get("n"):
        return {"measured": False, "in_band": None, "call": "unmeasured", "models": {}}
    band = tuple(sweep["band"])
    o = sweep["overall"]
    call = band_of_point(o["pass_at_1"], band).value
    return {
        "measured": True,
        "band": list(band),
        "call": call,
        "in_band": call == "inside",
        "pooled": {
            "n": o["n"],
            "passes": o["passes"],
            "pass_at_1": o["pass_at_1"],
            "ci_low": o["ci_low"],
            "ci_high": o["ci_high"],
            "interval_call": band_of_interval(o["ci_low"], o["ci_high"], band).value,
        },
        "models": {
            m: {
                "n": s["n"],
                "passes": s["passes"],
                "pass_at_1": s["pass_at_1"],
                "ci_low": s["ci_low"],
                "ci_high": s["ci_high"],
                "call": band_of_point(s["pass_at_1"], band).value if s["n"] else "unmeasured",
            }
            for m, s in sweep.get("models", {}).items()
        },
    }


def open_findings(findings: list[dict]) -> list[Finding]:
    return [f for f in (Finding.model_validate(d) for d in findings) if f.severity != Severity.INFO]


def failure_labels(deps: RunDeps, state) -> dict[str, int]:
    """Labels of the current version's failed solver trials (from the analyst's per-trial labels)."""
    failed = {
        t["trial_id"]
        for t in state.get("trials", [])
        if t.get("agent") == "solver" and t.get("outcome") == Outcome.FAIL.value
    }
    if not failed:
        return {}
    try:
        labels = deps.store.labels_for_run(state["run_id"], state.get("version"))
    except AttributeError:  # no labels table (analyst not installed): every failure counts as capability
        labels = {}
    counts: dict[str, int] = {}
    for tid in failed:
        lb = labels.get(tid)
        name = lb.label if lb is not None else "capability"
        counts[name] = counts.get(name, 0) + 1
    return counts


def revision_request(
    findings: list[Finding], band: dict, failures: dict[str, int], rollup: dict | None = None
) -> Request | None:
    """What to ask the reviser for; None when the version needs nothing.

    `rollup` is the version's label roll-up (probes/analyst/rollup.py). With one, a problem label counts only
    when the roll-up calls it consistent (trials and models agree); a label it calls noise is one odd
    trajectory, not a property of the task. Without one (no labels at all), the raw failure counts decide."""
    if findings:
        rules = sorted({f.rule for f in findings})
        return Request(kind="fix_findings", detail=f"open findings: {', '.join(rules)}")
    consistent = {e["label"]: e for e in (rollup or {}).get("consistent", [])}
    if not band["measured"] or band["in_band"]:
        if consistent:  # in band (or unmeasured), but the traces agree the task has a problem
            return Request(
                kind="fix_labels",
                detail="the trace labels agree: "
                + "; ".join(f"{label} ({e['why']})" for label, e in sorted(consistent.items())),
            )
        return None
    p = band["pooled"]
    rate = f"pooled pass@1 {p['passes']}/{p['n']} = {p['pass_at_1']:.2f} (95% CI {p['ci_low']:.2f}-{p['ci_high']:.2f})"
    lo, hi = band["band"]
    if band["call"] == "above":
        who = "every model passed" if p["passes"] == p["n"] else "above the band"
        return Request(kind="too_easy", detail=f"{who}: {rate}, band {lo:.0%}-{hi:.0%}; make it harder")
    mix = ", ".join(f"{k} {v}" for k, v in sorted(failures.items()))
    if rollup is not None:
        broken_labels = sorted(set(consistent) & set(FAILURE_MEANS_BROKEN))
        noise = sorted(e["label"] for e in rollup.get("noise", []) if e["label"] in FAILURE_MEANS_BROKEN)
        if p["passes"] == 0 and broken_labels:
            return Request(
                kind="broken",
                detail=f"every model failed, and the traces agree on {', '.join(broken_labels)} ({mix}): {rate}",
            )
        return Request(
            kind="too_hard",
            detail=f"below the band: {rate}; failures: {mix or 'unlabeled'}"
            + (f"; {', '.join(noise)} only as noise (trials or models disagree)" if noise else ""),
        )
    broken = sum(n for label, n in failures.items() if label in FAILURE_MEANS_BROKEN)
    if p["passes"] == 0 and failures and broken * 2 > sum(failures.values()):
        return Request(kind="broken", detail=f"every model failed, mostly for ambiguity/brittleness ({mix}): {rate}")
    return Request(kind="too_hard", detail=f"below the band: {rate}; failures: {mix or 'unlabeled'}")


def cap_reached(deps: RunDeps, state) -> str | None:
    """A loop-wide cap: iterations adopted, USD/tokens/trials over every version, wall time."""
    loop = deps.config.loop
    if state.get("iteration", 0) >= loop.max_iterations:
        return f"max_iterations: {loop.max_iterations} revision(s) adopted"
    check = run_budget(deps, state)  # every role's spend over every version (graphs/spend.py)
    if check.exhausted or (state.get("sweep") or {}).get("budget_stop"):
        return "budget: " + ("; ".join(check.reasons) or state["sweep"]["budget_stop"])
    if loop.max_wall_sec is not None:
        row = deps.store.get_run(state["run_id"])
        assert row is not None  # the load node recorded the run
        elapsed = (utcnow() - datetime.fromisoformat(row["created_at"])).total_seconds()
        if elapsed >= loop.max_wall_sec:
            return f"wall_time: {elapsed:.0f}s >= {loop.max_wall_sec:g}s"
    return None


def version_summary(deps: RunDeps, state, band: dict, findings: list[Finding]) -> dict:
    run_id, version = state["run_id"], state["version"]
    trials = [t for t in deps.store.trials_for_run(run_id) if t.env_version == version]
    return {
        "version": version,
        "iteration": state.get("iteration", 0),
        "band": band,
        "open_findings": sorted({f.rule for f in findings}),
        "trials": len(trials),
        "passes": sum(t.outcome == Outcome.PASS for t in trials if t.agent == "solver"),
    }


def decide_node(deps: RunDeps, state) -> dict:
    findings = open_findings(state.get("findings", []))
    band = band_measure(state.get("sweep"))
    failures = failure_labels(deps, state)
    summary = version_summary(deps, state, band, findings)
    deps.store.save_version_findings(
        state["run_id"],
        state["version"],
        state.get("findings", []),
        {**summary, "sweep": state.get("sweep"), "labels": state.get("labels"), "failure_labels": failures},
    )
    request = revision_request(findings, band, failures, state.get("labels"))
    stop = None
    if state.get("incomplete"):
        stop = "incomplete: the run could not finish (infrastructure); see `incomplete`"
    elif request is None:
        stop = "in_band_and_clean" if band["measured"] else "clean: no solver models, so no band to measure"
    else:
        stop = cap_reached(deps, state)
    decision = {
        "stop": stop is not None,
        "request": request.model_dump() if request else None,
        "band": band,
        "open_findings": summary["open_findings"],
        "failure_labels": failures,
    }
    deps.store.set_loop(
        state["run_id"],
        iteration=state.get("iteration", 0),
        version=state["version"],
        band_call=band["call"],
        stop_reason=stop,
    )
    log.info(
        "decide",
        run_id=state["run_id"],
        version=state["version"][:12],
        stop=stop,
        request=request.kind if request else None,
    )
    history = [h for h in state.get("history", []) if h["version"] != state["version"]] + [summary]
    return {
        "decision": decision,
        "request": decision["request"],
        "stop_reason": stop,
        "history": history,
        "gate_feedback": None,
        "repairs": 0,
        "proposal_id": None,
    }


def route_after_decide(state) -> str:
    return "report" if state["decision"]["stop"] else "revise"
