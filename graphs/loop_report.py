"""The report node and the `--json` document: the current version's verdict plus every version's figures.

Every key of the first report stays (run_id, environment, verdict, findings, trials, incomplete, sweep:
those of the CURRENT version). Added: schema_version, in_band, versions (per version: parent, patch,
author, approval, trials, sweep, findings, labels, built from the store), iterations, stop_reason,
awaiting_approval (the pending proposal at a checkpoint) and notifications that failed.
"""

from __future__ import annotations

from typing import Any

from envqa.core.layout import RunLayout
from envqa.core.models import Finding, TrialResult
from envqa.core.notify import notify
from envqa.core.run_deps import RunDeps
from envqa.core.verdicts import Verdict
from envqa.graphs.analyze import report_label
from envqa.graphs.decide import band_measure, open_findings
from envqa.graphs.gate import oracle_notice
from envqa.graphs.imported import cross_trial_section
from envqa.graphs.loop_state import versions_of
from envqa.graphs.spend import spend_section
from envqa.probes.coverage import coverage_section

SCHEMA_VERSION = 2


def trial_objects(results: list[TrialResult], store=None) -> list[dict]:
    """Report trial objects; with the store, each carries its `label` (issue 11, graphs/analyze.report_label)."""
    return [
        {
            "trial_id": t.trial_id,
            "agent": t.agent,
            "purpose": t.purpose,
            "model": t.model,
            "outcome": t.outcome.value,
            "reward": t.reward,
            "error_class": t.error_class,
            "artifacts_dir": t.artifacts_dir,
            "seconds": round((t.finished_at - t.started_at).total_seconds(), 3),
            **({"step_results": step_objects(t)} if t.step_results else {}),  # [[steps]] tasks (issue 23)
            **({"source": t.source, "provenance": t.provenance.model_dump(mode="json")} if t.provenance else {}),
            **({"label": report_label(store, t)} if store is not None else {}),
        }
        for t in results
    ]


def step_objects(t: TrialResult) -> list[dict]:
    """A multi-step trial's per-step rewards (agents/steps.py): name, outcome, reward, rewards, skipped, and
    on the step that stopped the rest, why."""
    return [
        s.model_dump(mode="json", include={"name", "outcome", "reward", "rewards", "skipped", "stopped", "error_class"})
        for s in t.step_results
    ]


def verdict_of(findings: list[Finding], incomplete: list[str], in_band: bool | None = None) -> str:
    """incomplete > findings > out_of_band > clean (clean: nothing open, in band or no band measured)."""
    if incomplete:
        return "incomplete"
    if findings:
        return "findings"
    if in_band is False:
        return "out_of_band"
    return "clean"


def final_stop_reason(state) -> str | None:
    if state.get("stop_reason"):
        return state["stop_reason"]
    if state.get("gate_passed") is False:
        return (
            f"gate_failed: the proposal was dropped after {state.get('repairs', 0)} repair(s): "
            f"{state.get('gate_feedback') or ''}".rstrip(": ")
        )
    if state.get("request") and not state.get("proposal_id"):
        return f"nothing_to_propose: {state.get('revise_note') or 'no fixer or model could address the request'}"
    return None


def versions_section(deps: RunDeps, run_id: str) -> list[dict[str, Any]]:
    """Per version, from the store: what it is, who wrote it, who approved it, and what it showed."""
    store = deps.store
    trials = store.trials_for_run(run_id)
    figures = store.version_findings(run_id)
    proposals = store.proposals_for_run(run_id)
    approvals = {a["proposal_id"]: a for a in store.approvals_for_run(run_id)}
    out: list[dict[str, Any]] = []
    for info in versions_of(deps).run_versions(run_id):
        v = info.version
        adopted = next((p for p in proposals if p.candidate_version == v and p.status == "adopted"), None)
        approval = approvals.get(adopted.proposal_id) if adopted else None
        fig = figures.get(v)
        if fig is None and adopted is None and out:
            continue  # a candidate the gate saw but nobody adopted: it is in `proposals`, not a version of the loop
        summary = (fig or {}).get("summary", {})
        out.append(
            {
                "version": v,
                "parent": info.parent,
                "patch": info.patch,
                "author": info.author,
                "reason": info.reason,
                "proposal_id": adopted.proposal_id if adopted else None,
                "approval": {k: approval[k] for k in ("action", "approver", "reason", "decided_at")}
                if approval
                else None,
                "trials": trial_objects([t for t in trials if t.env_version == v], store),
                "sweep": summary.get("sweep"),
                "band": summary.get("band"),
                "findings": (fig or {}).get("findings", []),
                "labels": summary.get("labels"),
            }
        )
    return out


def report_body(
    deps: RunDeps, state, verdict: str, stop_reason: str | None, pending: dict | None = None
) -> dict[str, Any]:
    run_id = state["run_id"]
    current = [t for t in deps.store.trials_for_run(run_id) if t.env_version == state.get("version")]
    have = {t.trial_id for t in current}  # an imported trial is stored once, under the run that first imported it
    current += [
        r
        for r in (deps.store.get_trial(e["trial_id"]) for e in state.get("trials", []) if e["trial_id"] not in have)
        if r is not None
    ]
    band = band_measure(state.get("sweep"))
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "environment": {"dir": state["env_dir"], "name": state.get("env_name"), "version": state.get("version")},
        "verdict": verdict,
        # said first: e.g. the reference solution fails, so no fix can pass the gate until it works (graphs/gate.py)
        "notices": [n for n in [oracle_notice([Finding.model_validate(f) for f in state.get("findings", [])])] if n],
        "in_band": band["in_band"],
        "band": band,
        "findings": state.get("findings", []),
        "trials": trial_objects(current, deps.store) if current else state.get("trials", []),
        "incomplete": state.get("incomplete", []),
        "inconclusive": state.get("inconclusive", []),  # probes/inconclusive.py (issue 12): could not judge
        "coverage": coverage_section(state),  # probes/coverage.py (issue 12): what ran, what was skipped and why
        "sweep": state.get("sweep"),
        "cross_trial": cross_trial_section(deps, state, current),  # issue 33: per-test table, imported trials
        "versions": versions_section(deps, run_id),
        "iterations": state.get("iteration", 0),
        "stop_reason": stop_reason,
        "awaiting_approval": pending,
        "proposals": [p.model_dump(mode="json", exclude={"diff"}) for p in deps.store.proposals_for_run(run_id)],
        "notifications": [n for n in deps.store.notifications_for_run(run_id) if n["status"] != "sent"],
        "generation": state.get("generation"),  # issue 13: how version 1 was generated from spec.md (or null)
        "spend": spend_section(deps, state),  # the hunter's, analyst's and generator's spend per model (#14)
    }


def report_node(deps: RunDeps, state) -> dict:
    findings = open_findings(state.get("findings", []))
    stop = final_stop_reason(state)
    verdict = verdict_of(findings, state.get("incomplete", []), band_measure(state.get("sweep"))["in_band"])
    body = report_body(deps, state, verdict, stop)
    all_findings = [Finding.model_validate(f) for f in state.get("findings", [])]
    deps.store.finish_run(state["run_id"], verdict, body, all_findings)
    deps.store.set_loop(state["run_id"], stop_reason=stop, pending_proposal=None)
    export_report(deps, state["run_id"])
    payload = {
        "run_id": state["run_id"],
        "env_name": state.get("env_name"),
        "version": state.get("version"),
        "verdict": verdict,
        "stop_reason": stop,
    }
    notify(
        deps.config, "run_incomplete" if verdict == Verdict.INCOMPLETE else "run_finished", payload, store=deps.store
    )
    if stop and stop.startswith("budget"):
        notify(deps.config, "budget_stop", payload, store=deps.store)
    return {"verdict": verdict, "stop_reason": stop}


def awaiting_report(deps: RunDeps, state, payload: dict) -> dict:
    """The report at an approval checkpoint: verdict `awaiting_approval`, the proposal in full."""
    body = report_body(deps, state, Verdict.AWAITING_APPROVAL.value, None, pending=payload)
    deps.store.save_pending_report(state["run_id"], body)
    export_report(deps, state["run_id"])
    return body


def export_report(deps: RunDeps, run_id: str) -> None:
    """runs/<run_id>/report.json, rendered from the store's copy (the one every reader uses): an export for
    people and other tools that nothing in qa reads back."""
    report = deps.store.run_report(run_id)
    assert report is not None  # the report node saved it first
    RunLayout(deps.config.runs_dir, run_id).write_report(report)
