"""A task's run report (the store's `run_report()` dict) -> its TaskRow: the one mapping every dataset view uses.

The dataset run (`qa run PATH...`), its `--json`, the HTML triage table and the CI summary all read TaskRows, so
what a row says about a run is decided here once. Choices, and why:
- `findings` are the findings of every version, the current version's first: a fix the loop adopted lives in
  qa's store, not in the task folder a pull request changes, so what version 1 showed is still true of the files
  on disk. A finding the current version no longer has says so in its summary ("fixed in a later version").
- `pass_at_1` is the pooled pass@1 of the current version's sweep (the number the verdict's band call used).
- a proposal's `state` is its stored status, except the one the run is waiting on, which is `awaiting_approval`;
  its `diff` comes from the adopted version's patch or the pending proposal (the report keeps no other diff).
"""

from __future__ import annotations

import re

from envqa.app.dataset_models import TaskFinding, TaskProposal, TaskRow
from envqa.core.defaults import DATASET_EVIDENCE_CHARS as EVIDENCE_CHARS
from envqa.core.verdicts import exit_code as verdict_exit

LOCATION = re.compile(r"^(?P<file>[^:\s][^:]*?)(?::(?P<line>\d+))?$")
FIXED = "fixed in a later version: "
SEVERITY_RANK = {"critical": 0, "error": 1, "warning": 2, "info": 3}


def split_location(location: str | None) -> tuple[str | None, int | None]:
    """`tests/test.sh:4` -> ("tests/test.sh", 4); `task.toml` -> ("task.toml", None); a folder keeps its slash."""
    m = LOCATION.match((location or "").strip())
    if not m:
        return None, None
    return m["file"], int(m["line"]) if m["line"] else None


def task_finding(f: dict, fixed: bool = False) -> TaskFinding:
    evidence = "\n".join(str(e) for e in f.get("evidence") or [])
    if len(evidence) > EVIDENCE_CHARS:
        evidence = (
            evidence[:EVIDENCE_CHARS] + f"\n… ({len(evidence) - EVIDENCE_CHARS} more characters in the task's report)"
        )
    file, line = split_location(f.get("location"))
    return TaskFinding(
        rule=str(f.get("rule")),
        label=f.get("label"),
        severity=f.get("severity"),
        summary=(FIXED if fixed else "") + (f.get("message") or ""),
        file=file,
        line=line,
        evidence=evidence,
    )


def findings_of(report: dict) -> list[TaskFinding]:
    """The current version's findings, then those only earlier versions had (one per rule and location)."""
    current = sorted(
        (f for f in report.get("findings") or [] if isinstance(f, dict)),
        key=lambda f: SEVERITY_RANK.get(f.get("severity") or "", 4),
    )
    seen = {(f.get("rule"), f.get("location")) for f in current}
    out = [task_finding(f) for f in current]
    for v in report.get("versions") or []:
        for f in (f for f in v.get("findings") or [] if isinstance(f, dict)):
            key = (f.get("rule"), f.get("location"))
            if key not in seen:
                seen.add(key)
                out.append(task_finding(f, fixed=True))
    return out


def proposals_of(report: dict) -> list[TaskProposal]:
    pending = (report.get("awaiting_approval") or {}).get("proposal") or {}
    by_id = {v.get("proposal_id"): v for v in report.get("versions") or [] if v.get("proposal_id")}
    out = []
    for p in report.get("proposals") or []:
        pid = p.get("proposal_id")
        version = by_id.get(pid) or {}
        approval = version.get("approval") or {}
        gate = p.get("gate") or {}
        waiting = pid is not None and pid == pending.get("proposal_id")
        out.append(
            TaskProposal(
                version=p.get("candidate_version"),
                proposer=p.get("author"),
                addresses=list(p.get("addresses") or []),
                gate=None if not gate else ("passed" if gate.get("passed") else "failed"),
                state="awaiting_approval" if waiting else p.get("status"),
                approved_by=approval.get("approver") if approval.get("action") == "approve" else None,
                diff=(pending.get("diff") if waiting else version.get("patch")) or "",
            )
        )
    return out


def task_row(
    path: str,
    name: str,
    run_id: str | None,
    report: dict | None,
    seconds: float | None,
    report_html: str | None,
    *,
    error: str | None = None,
    exit_code: int | None = None,
) -> TaskRow:
    """One dataset row from a task's run report. `report` None: the task has no report (it never started, or
    stopped before one); with `error` the row is that task's failure ("invalid", exit 2 unless `exit_code` says
    otherwise: pass 3 for an infrastructure error)."""
    if error is not None:
        code = 2 if exit_code is None else exit_code
        return TaskRow(
            path=path,
            name=name,
            run_id=run_id,
            verdict="invalid" if code == 2 else "incomplete",
            exit_code=code,
            error=error,
            seconds=seconds,
            report_html=report_html,
        )
    if report is None:
        return TaskRow(
            path=path,
            name=name,
            run_id=run_id,
            verdict=None,
            seconds=seconds,
            report_html=report_html,
            exit_code=verdict_exit(None) if exit_code is None else exit_code,
        )
    band = report.get("band") or {}
    pooled = band.get("pooled") or {}
    limits = band.get("band")
    verdict = report.get("verdict")
    return TaskRow(
        path=path,
        name=name or (report.get("environment") or {}).get("name") or path,
        run_id=run_id or report.get("run_id"),
        verdict=verdict,
        exit_code=verdict_exit(verdict) if exit_code is None else exit_code,
        findings=findings_of(report),
        pass_at_1=pooled.get("pass_at_1"),
        band=(float(limits[0]), float(limits[1])) if limits and len(limits) == 2 else None,
        in_band=report.get("in_band"),
        proposals=proposals_of(report),
        report_html=report_html,
        seconds=seconds,
        error=report.get("stop_reason") if verdict == "incomplete" else None,
        agents=agents_of(report),
    )


def agents_of(report: dict) -> dict[str, dict]:
    """pass@1 per agent/model of the current version's sweep (issue 33), marked imported or qa's own."""
    models = (report.get("sweep") or {}).get("models") or {}
    return {
        m: {
            "n": r.get("n"),
            "passes": r.get("passes"),
            "pass_at_1": r.get("pass_at_1"),
            "ci_low": r.get("ci_low"),
            "ci_high": r.get("ci_high"),
            "source": "imported" if r.get("stop_reason") == "imported" else "qa",
        }
        for m, r in models.items()
    }


def top_finding(row: TaskRow) -> TaskFinding | None:
    """The finding a triage table shows first: open before fixed, then by severity."""
    if not row.findings:
        return None
    return min(row.findings, key=lambda f: (f.summary.startswith(FIXED), SEVERITY_RANK.get(f.severity or "", 4)))


def proposal_state(row: TaskRow) -> str:
    """One word for the triage table: the last proposal's state (and who approved it), or ""."""
    if not row.proposals:
        return ""
    p = row.proposals[-1]
    state = p.state or ("gate " + p.gate if p.gate else "proposed")
    return f"{state} by {p.approved_by}" if p.approved_by and state in ("approved", "adopted") else state
