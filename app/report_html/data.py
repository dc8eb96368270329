"""The report's data: the store's report (runs.report_json) and trial results plus each trial's artifact
files, normalised into one view model. Each trial's `result.json` on disk is an export: never read here.

The report JSON grows while the loop is being built (versions, labels, coverage, proposals), so every
key is optional here: a report with no `versions` is read as one version, a trial with no `label` is
unlabeled, a missing artifact is an empty trace. Traces are the bulk of a report, so each trial's is
kept apart (`traces`) to be compressed and rendered only when opened; long texts are cut to a head and a
tail with the original size kept, so a 500-trial run stays a few megabytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envqa.core.defaults import REPORT_FILE_LIMIT as FILE_LIMIT
from envqa.core.defaults import REPORT_TEXT_LIMIT as TEXT_LIMIT
from envqa.core.registry import LABEL_COLORS

SKIP_FILES = {"result.json", "trajectory.json"}


def clip(text: Any, limit: int = TEXT_LIMIT) -> dict | str:
    """A string as is when short, else {"head", "tail", "size"}: the viewer shows both ends and the size."""
    if not isinstance(text, str):
        text = json.dumps(text, indent=1, default=str)
    if len(text) <= limit:
        return text
    head = int(limit * 0.6)
    return {"head": text[:head], "tail": text[-(limit - head) :], "size": len(text)}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(errors="replace"))
    except (OSError, ValueError):
        return None


def trial_dir(trial: dict, run_dir: Path) -> Path:
    """The trial's artifacts: its recorded directory, else <run>/<trial_id> (a report copied elsewhere)."""
    recorded = trial.get("artifacts_dir")
    if recorded and Path(recorded).is_dir():
        return Path(recorded)
    return run_dir / str(trial.get("trial_id"))


def atif_steps(trajectory: dict) -> list[dict]:
    """ATIF steps, each clipped: source, message, tool calls with arguments, observation results, metrics."""
    steps = []
    for raw in trajectory.get("steps") or []:
        obs = (raw.get("observation") or {}).get("results") or []
        steps.append(
            {
                "step_id": raw.get("step_id"),
                "source": raw.get("source"),
                "timestamp": raw.get("timestamp"),
                "message": clip(raw.get("message") or ""),
                "tool_calls": [
                    {"id": c.get("tool_call_id"), "name": c.get("function_name"), "arguments": clip(c.get("arguments"))}
                    for c in raw.get("tool_calls") or []
                ],
                "observations": [
                    {"call_id": o.get("source_call_id"), "content": clip(o.get("content") or "")} for o in obs
                ],
                "metrics": raw.get("metrics"),
            }
        )
    return steps


def trial_trace(trial: dict, run_dir: Path, result: dict | None = None) -> dict:
    """Everything the trace viewer shows for one trial: ATIF steps (model agents) and the artifact files
    (oracle output, exploit transcripts, verifier output, strace) with the stored result's error message."""
    d = trial_dir(trial, run_dir)
    trace: dict[str, Any] = {"steps": [], "files": [], "notes": None, "error": None}
    traj = _read_json(d / "agent" / "trajectory.json")
    if isinstance(traj, dict):
        trace["steps"] = atif_steps(traj)
        trace["notes"] = traj.get("notes")
        trace["final_metrics"] = traj.get("final_metrics")
    if isinstance(result, dict):
        trace["error"] = result.get("error_message")
        trace["timings"] = result.get("timings")
    if d.is_dir():
        for path in sorted(p for p in d.rglob("*") if p.is_file() and p.name not in SKIP_FILES):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            trace["files"].append(
                {"name": path.relative_to(d).as_posix(), "size": path.stat().st_size, "text": clip(text, FILE_LIMIT)}
            )
    return trace


def _version_entries(report: dict) -> Iterator[tuple[dict, Any]]:
    """(version, entry) for each entry of each version's `trials` list: a trial object or a trial id."""
    for v in report.get("versions") or []:
        trials = v.get("trials")
        for t in trials if isinstance(trials, list) else []:
            yield v, t


def _trials_by_id(report: dict) -> dict[str, dict]:
    """Each trial object once, by id: versions[].trials first (tagged with their version), then the top-level
    list, whose keys win."""
    seen: dict[str, dict] = {}
    for v, t in _version_entries(report):
        if isinstance(t, dict) and t.get("trial_id"):
            seen.setdefault(t["trial_id"], {**t, "version": t.get("version") or v.get("version")})
    for t in report.get("trials") or []:
        if isinstance(t, dict) and t.get("trial_id"):
            seen[t["trial_id"]] = {**seen.get(t["trial_id"], {}), **t}
    return seen


def collect_trials(report: dict, results: dict[str, dict] | None = None) -> list[dict]:
    """Every trial of every version, once: the top-level list (current version) plus versions[].trials
    when those are trial objects. Each gets its `version` (from the report, else its stored result)."""
    results = results or {}
    seen = _trials_by_id(report)
    ids_by_version = {t: v.get("version") for v, t in _version_entries(report) if isinstance(t, str)}
    for tid, t in seen.items():
        t["version"] = (
            t.get("version")
            or t.get("env_version")
            or ids_by_version.get(tid)
            or (results.get(tid) or {}).get("env_version")
            or (report.get("environment") or {}).get("version")
        )
    return list(seen.values())


def normalise_versions(report: dict) -> list[dict]:
    """The versions in order; a report from before the loop is one version made of its top-level keys."""
    env = report.get("environment") or {}
    versions = [dict(v) for v in report.get("versions") or [] if isinstance(v, dict)]
    if not versions:
        versions = [{"version": env.get("version"), "parent": None, "author": "user", "reason": "loaded"}]
    last = versions[-1]
    if last.get("version") == env.get("version") or len(versions) == 1:
        last.setdefault("sweep", report.get("sweep"))
        last.setdefault("findings", report.get("findings"))
    for i, v in enumerate(versions):
        v["index"] = i + 1
        v["short"] = (v.get("version") or "?")[:12]
        v["findings"] = v.get("findings") or []
        v.pop("trials", None)  # trials are listed once, each with its version
    return versions


def spend_rows(versions: list[dict], report: dict, proposals: list[dict]) -> list[dict]:
    """Spend per model and role: the sweep's per-model spend (role solver) per version, each proposal's
    (role reviser), plus whatever other roles the report lists under `spend` (rows or {role: {model: spend}})."""
    rows = []
    for v in versions:
        for model, m in ((v.get("sweep") or {}).get("models") or {}).items():
            rows.append({"role": "solver", "model": model, "version": v["short"], **(m.get("spend") or {})})
    for p in proposals:
        if isinstance(p.get("spend"), dict) and p["spend"]:
            rows.append(
                {
                    "role": "reviser",
                    "model": str(p.get("author") or "").removeprefix("model:"),
                    "version": (p.get("candidate_version") or p.get("parent_version") or "")[:12],
                    **p["spend"],
                }
            )
    extra = report.get("spend")
    if isinstance(extra, list):
        rows += [r for r in extra if isinstance(r, dict)]
    elif isinstance(extra, dict):
        for role, by_model in extra.items():
            if isinstance(by_model, dict):
                for model, s in by_model.items():
                    if isinstance(s, dict):
                        rows.append({"role": role, "model": model, **s})
    return rows


def store_extras(store, run_id: str) -> dict:
    """From the store, besides the report: proposals (with gate results) and labels for reports that do not
    carry them, and every trial's result (its error message and timings for the trace, its version)."""
    return {
        "proposals": [p.model_dump(mode="json") for p in store.proposals_for_run(run_id)],
        "labels": {k: v.public() for k, v in store.labels_for_run(run_id).items()},
        "results": {t.trial_id: t.model_dump(mode="json") for t in store.trials_for_run(run_id)},
    }


def merge_proposals(report: dict, stored: list[dict]) -> list[dict]:
    """The report's proposals (which leave out the diff) completed from the store's, plus the one awaiting
    approval (its diff and gate come with the checkpoint's payload)."""
    by_id = {p.get("proposal_id"): p for p in stored}
    listed = report.get("proposals") or stored
    proposals = [
        {**by_id.get(p.get("proposal_id"), {}), **{k: v for k, v in p.items() if v is not None}}
        for p in listed
        if isinstance(p, dict)
    ]
    pending = report.get("awaiting_approval")
    if isinstance(pending, dict) and isinstance(pending.get("proposal"), dict):
        p = pending["proposal"]
        proposals = [q for q in proposals if q.get("proposal_id") != p.get("proposal_id")]
        proposals.append(
            {
                **p,
                "diff": pending.get("diff") or p.get("diff"),
                "gate": pending.get("gate") or p.get("gate"),
                "status": "awaiting approval",
            }
        )
    return proposals


PROPOSAL_KEYS = (
    "proposal_id",
    "status",
    "rationale",
    "addresses",
    "expected_effect",
    "attempt",
    "author",
    "spec_check",
)


def _attach_traces(trials: list[dict], run_dir: Path, extras: dict) -> dict[str, dict]:
    """Complete each trial from the store (its label, a multi-step trial's per-step rewards) and read its trace;
    the trial keeps only the trace's counts, so the page stays small and traces load when opened."""
    results = extras.get("results") or {}
    labels = extras.get("labels") or {}
    traces: dict[str, dict] = {}
    for t in trials:
        if not t.get("label") and t["trial_id"] in labels:
            t["label"] = labels[t["trial_id"]]
        stored_steps = (results.get(t["trial_id"]) or {}).get("step_results")
        if not t.get("step_results") and stored_steps:  # a multi-step trial's per-step rewards (issue 23)
            t["step_results"] = stored_steps
        trace = trial_trace(t, run_dir, results.get(t["trial_id"]))
        t["steps"] = len(trace["steps"])
        t["files"] = len(trace["files"])
        t.pop("artifacts_dir", None)
        traces[t["trial_id"]] = trace
    return traces


def _attach_proposals(versions: list[dict], proposals: list[dict]) -> None:
    """Give each version the proposal that produced it: its gate, the proposal's summary and its patch."""
    by_candidate = {p.get("candidate_version"): p for p in proposals if p.get("candidate_version")}
    for v in versions:
        p = by_candidate.get(v.get("version"))
        if p:
            v.setdefault("gate", p.get("gate"))
            v.setdefault("proposal", {k: p.get(k) for k in PROPOSAL_KEYS})
            v["patch"] = v.get("patch") or p.get("diff")


def _cross_trial(report: dict, sweep: dict | None) -> dict | None:
    """Issue 33: pass@1 per agent/model (qa's and imported), the per-test table, what was imported."""
    if not report.get("cross_trial"):
        return None
    return {**report["cross_trial"], "models": (sweep or {}).get("models") or {}}


def build_view(report: dict, run_dir: Path, extras: dict | None = None) -> tuple[dict, dict[str, dict]]:
    """(view model for the page, {trial_id: trace}) from a report and its run directory."""
    extras = extras or {}
    versions = normalise_versions(report)
    trials = collect_trials(report, extras.get("results") or {})
    traces = _attach_traces(trials, run_dir, extras)
    proposals = merge_proposals(report, extras.get("proposals") or [])
    _attach_proposals(versions, proposals)
    adopted = {v.get("version") for v in versions}
    sweep = report.get("sweep") or next((v["sweep"] for v in reversed(versions) if v.get("sweep")), None)
    band = sweep or {}
    view = {
        "run_id": report.get("run_id"),
        "environment": report.get("environment") or {},
        "verdict": report.get("verdict"),
        "stop_reason": report.get("stop_reason"),
        "iterations": report.get("iterations"),
        "schema_version": report.get("schema_version"),
        "band": band.get("band"),
        "versions": versions,
        "trials": trials,
        "incomplete": report.get("incomplete") or [],
        "coverage": report.get("coverage"),
        "notifications": report.get("notifications") or [],
        "other_proposals": [p for p in proposals if p.get("candidate_version") not in adopted],
        "spend": spend_rows(versions, report, proposals),
        "budget_stop": band.get("budget_stop"),
        "awaiting_approval": bool(report.get("awaiting_approval")),
        "in_band": report.get("in_band"),
        "inconclusive": report.get("inconclusive") or [],
        "cross_trial": _cross_trial(report, sweep),
        "label_colors": dict(LABEL_COLORS),  # the label registry's swatches (report.js reads them)
    }
    return view, traces
