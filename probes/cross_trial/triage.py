"""Across the tasks of one analysis (issue 41): a shortcut proven in one task's trajectories warns its sibling
tasks, and the tasks are put worst first with the one line of evidence a person reads before opening anything.

Siblings are variants of one task (`maze-explorer-5x5`, `maze-explorer-algorithm`, `...-algorithm.hard`): names
that share their first words and tests that share their names (parametrised ids folded). They are built from one
environment and one verifier, so a verifier that leaks its expected values in one leaks them in the others, even
where no trajectory was recorded. Worst first: severity, then the strength of the evidence (a trajectory step
beats a failure text, which beats a pass/fail pattern), then how many trials it rests on.
"""

from __future__ import annotations

import re

from envqa.core.models import Finding, Severity

SEVERITY_RANK = {"critical": 4, "error": 3, "warning": 2, "info": 1}
EVIDENCE_RANK = {  # how strongly a rule's evidence shows the flaw: trajectory steps > failure texts > patterns
    "trajectory-tampers-verifier": 4,
    "copied-verifier-values": 4,
    "verifier-wants-missing-file": 3,
    "converging-wrong-answers": 3,
    "failures-on-unstated-requirement": 3,
    "test-fails-alone": 2,
    "outlier-pass": 1,
    "agent-never-ran": 0,
}
PROVEN = {"copied-verifier-values", "trajectory-tampers-verifier"}
MIN_SHARED_WORDS = 2
LOOK_FIRST = 10  # tasks in "Look at these first"


def _words(task: str) -> list[str]:
    return re.split(r"[-_]", task.split(".")[0])


def _test_base(name: str) -> str:
    return re.sub(r"\[.*\]$", "", name.rsplit("::", 1)[-1])


def _siblings(a: dict, b: dict) -> bool:
    wa, wb = _words(a["task"]), _words(b["task"])
    shared = 0
    for x, y in zip(wa, wb, strict=False):
        if x != y:
            break
        shared += 1
    if shared < MIN_SHARED_WORDS or a["task"] == b["task"]:
        return False
    ta, tb = {_test_base(r["test"]) for r in a["tests"]}, {_test_base(r["test"]) for r in b["tests"]}
    return bool(ta & tb - {""})


def sibling_shortcuts(triages: list[dict]) -> None:
    """Add to each sibling of a task with a proven shortcut a warning citing it (in place)."""
    proven = [
        (t, f) for t in triages for f in t["findings"] if f["rule"] in PROVEN and "harness problem" not in f["message"]
    ]
    for source, finding in proven:
        for other in triages:
            if other is source or not _siblings(source, other):
                continue
            if any(f["rule"] in PROVEN for f in other["findings"]):
                continue
            warn = Finding.of(
                finding["rule"],
                severity=Severity.WARNING,
                message=f"a sibling task, {source['task']}, shares its tests and a passing trajectory there did this: "
                f"{finding['message']}; the same verifier likely leaks here (no trajectory here shows it)",
                evidence=finding["evidence"][:4],
                location=f"{other['task']} (sibling of {source['task']})",
                trial_ids=finding.get("trial_ids", [])[:12],
            )
            other["findings"].append(warn.public())
            if other["verdict"] in {"clean", "out_of_band", "incomplete"}:
                other["verdict"] = "findings"


def strength(triage: dict) -> tuple:
    """The sort key, worst first: top severity, evidence rank, trials cited; then the name."""
    fs = [f for f in triage["findings"] if f["severity"] != "info"]
    top = max((SEVERITY_RANK.get(f["severity"], 0) for f in fs), default=0)
    evidence = max((EVIDENCE_RANK.get(f["rule"], 1) for f in fs if SEVERITY_RANK[f["severity"]] == top), default=0)
    cited = max((len(f.get("trial_ids") or []) for f in fs), default=0)
    return (-top, -evidence, -cited, triage["task"])


def worst_first(triages: list[dict]) -> list[dict]:
    for t in triages:
        t["findings"].sort(key=lambda f: (-SEVERITY_RANK.get(f["severity"], 0), -EVIDENCE_RANK.get(f["rule"], 1)))
    return sorted(triages, key=strength)


def look_first(triages: list[dict]) -> list[dict]:
    """The flagged tasks (warning or above), worst first, each with its one evidence line and trials to open."""
    out = []
    for t in triages:
        fs = [f for f in t["findings"] if f["severity"] != "info"]
        if not fs:
            continue
        top = fs[0]
        line = (top["evidence"][0] if top["evidence"] else top["message"]).splitlines()[0][:300]
        if "sibling of" in (top.get("location") or ""):
            line = f"as its sibling {top['location'].split('sibling of ', 1)[1].rstrip(')')}: {line}"
        out.append(
            {
                "task": t["task"],
                "severity": top["severity"],
                "rule": top["rule"],
                "why": top["message"][:300],
                "evidence": line,
                "trials": _trial_names(top)[:5],
            }
        )
    return out[:LOOK_FIRST]


def _trial_names(finding: dict) -> list[str]:
    names = []
    for e in finding["evidence"]:
        m = re.match(r"trial (\S+)", e)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names
