"""Accuracy on tasks written by others: `qa lint` on Terminal-Bench 2.0 tasks next to their 2.1 fixes, and on
tasks 2.1 left unchanged (controls).

    python benchmarks/real_tasks.py --corpus /work/scratch/tb2 [--json-only]

DIR is a folder staged from ../shared/corpus as its README says ("Staging the TB2 tasks"), never a folder in this
repository: `pairs/<task>/2.0/` and `pairs/<task>/2.1/` for each row of `tb2-fixes-dev.csv`, `controls/<task>/`
for each row of `tb2-unchanged-dev.csv`, and both csv files beside them (the answer key: what 2.1 fixed and what a
QA tool should say about 2.0). An optional `judged-real.json` in DIR ({"<task>": {"<rule>": "why, with
evidence"}}) lists control findings at error or above that a reviewer read and judged real: the goal allows those.

Per pair, a finding is *named* when it is on 2.0 at warning or above, carries the label the csv's class expects
(EXPECTED_LABELS) and 2.1 has no finding of the same rule and message (digits aside: line numbers move). Per rule:
named (pairs), fires on both versions, fires on the fix only, fires on controls (warning or above). The last line
is one JSON object; exit 1 on a missed goal (GOALS), 0 when met, and 0 with a message on stderr when DIR is absent
(the corpus is not in the repository, so CI cannot run this: docs/benchmarks.md records its figures).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from envqa.core.environment import load_environment
from envqa.core.errors import InputError
from envqa.probes.static.task_schema import lint_findings

# What each csv class means in our labels. "oracle" (a reference solution that breaks, e.g. an exact apt pin the
# archive drops) and "infra" (a build or run that reaches for a moving outside resource) are both the tests or the
# environment rejecting good work: brittleness. infra is also accepted for "infra" (our network rules use it).
EXPECTED_LABELS = {
    "ambiguity": {"ambiguity"},
    "brittleness": {"brittleness"},
    "oracle": {"brittleness"},
    "infra": {"brittleness", "infra"},
}
GOALS = {"pairs_named_min": 9, "controls_flagged_max": 5}
RAISED = ("warning", "error", "critical")
SERIOUS = ("error", "critical")
PROBLEM_LABELS = ("ambiguity", "brittleness")


def lint(task_dir: Path) -> dict:
    """qa lint's findings for one task directory (in process, as `qa lint --json` computes them)."""
    try:
        env = load_environment(task_dir, lint=True)
    except InputError as e:
        return {"error": str(e), "findings": []}
    # place by place (not grouped per file): a fix that drops one pin of three is a finding removed by the fix
    return {"error": None, "findings": [f.public() for f in lint_findings(env, grouped=False)]}


def key(finding: dict) -> tuple[str, str]:
    """A finding's identity across versions: its rule and message with the digits blanked (lines move)."""
    return finding["rule"], re.sub(r"\d+", "#", finding["message"])


def raised(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["severity"] in RAISED]


def read_csv(path: Path) -> list[dict]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def compare_pair(row: dict, old: dict, new: dict) -> dict:
    """What the lint said about a 2.0 task and its 2.1 fix, scored against the csv's class."""
    want = EXPECTED_LABELS.get(row["class"], set())
    new_keys = {key(f) for f in new["findings"]}
    old_keys = {key(f) for f in old["findings"]}
    named = [f for f in raised(old["findings"]) if f["label"] in want and key(f) not in new_keys]
    return {
        "task": row["task"],
        "class": row["class"],
        "expected_labels": sorted(want),
        "named": sorted({f["rule"] for f in named}),
        "named_evidence": [f"{f['rule']}: {(f.get('evidence') or [f['message']])[0]}" for f in named][:3],
        "removed_by_fix": sorted({f["rule"] for f in raised(old["findings"]) if key(f) not in new_keys}),
        "on_both": sorted({f["rule"] for f in raised(old["findings"]) if key(f) in new_keys}),
        "fix_only": sorted({f["rule"] for f in raised(new["findings"]) if key(f) not in old_keys}),
        "errors": [e for e in (old["error"], new["error"]) if e],
    }


def control_row(task: str, result: dict, judged: dict) -> dict:
    flagged = [f for f in raised(result["findings"]) if f["label"] in PROBLEM_LABELS]
    serious = [f for f in result["findings"] if f["severity"] in SERIOUS]
    return {
        "task": task,
        "raised": sorted({f"{f['rule']} ({f['severity']})" for f in raised(result["findings"])}),
        "flagged": bool(flagged),
        "serious": sorted({f["rule"] for f in serious}),
        "serious_unjudged": sorted({f["rule"] for f in serious if f["rule"] not in judged.get(task, {})}),
        "evidence": [f"{f['rule']}: {(f.get('evidence') or [f['message']])[0]}" for f in raised(result["findings"])][
            :4
        ],
        "error": result["error"],
    }


def per_rule(pairs: list[dict], controls: list[dict]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = defaultdict(lambda: {"named": 0, "both": 0, "fix_only": 0, "controls": 0})
    for p in pairs:
        for rule in p["named"]:
            table[rule]["named"] += 1
        for rule in p["on_both"]:
            table[rule]["both"] += 1
        for rule in p["fix_only"]:
            table[rule]["fix_only"] += 1
    for c in controls:
        for rule in {r.split(" (")[0] for r in c["raised"]}:
            table[rule]["controls"] += 1
    return dict(sorted(table.items()))


def show(console: Console, pairs: list[dict], controls: list[dict], rules: dict) -> None:
    t = Table(title="per rule (findings at warning or above)")
    for col in ("rule", "named", "fires on both", "fix only", "controls"):
        t.add_column(col)
    for rule, n in rules.items():
        t.add_row(rule, str(n["named"]), str(n["both"]), str(n["fix_only"]), str(n["controls"]))
    console.print(t)
    t = Table(title="pairs (2.0 vs 2.1)")
    for col in ("task", "class", "named", "removed by fix", "on both", "fix only"):
        t.add_column(col, overflow="fold")
    for p in pairs:
        t.add_row(
            p["task"],
            p["class"],
            ", ".join(p["named"]) or "-",
            ", ".join(p["removed_by_fix"]) or "-",
            ", ".join(p["on_both"]) or "-",
            ", ".join(p["fix_only"]) or "-",
        )
    console.print(t)
    t = Table(title="controls (left unchanged by 2.1)")
    for col in ("task", "findings at warning or above", "error or above, not judged real"):
        t.add_column(col, overflow="fold")
    for c in controls:
        if c["raised"] or c["error"]:
            t.add_row(c["task"], ", ".join(c["raised"]) or c["error"] or "-", ", ".join(c["serious_unjudged"]) or "-")
    console.print(t)
    quiet = sum(1 for c in controls if not c["raised"] and not c["error"])
    console.print(f"{quiet} of {len(controls)} controls have no finding at warning or above")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="the staged folder (pairs/, controls/, csv files)")
    parser.add_argument("--json-only", action="store_true", help="print only the last JSON line")
    args = parser.parse_args(argv)
    root: Path = args.corpus
    if not (root / "tb2-fixes-dev.csv").is_file():
        print(
            f"real_tasks: skipped: {root} holds no staged corpus (tb2-fixes-dev.csv); stage it from "
            '../shared/corpus as its README says ("Staging the TB2 tasks")',
            file=sys.stderr,
        )
        print(json.dumps({"skipped": True, "corpus": str(root)}))
        return 0
    judged_path = root / "judged-real.json"
    judged = json.loads(judged_path.read_text()) if judged_path.is_file() else {}
    pairs, controls = [], []
    for row in read_csv(root / "tb2-fixes-dev.csv"):
        old, new = lint(root / "pairs" / row["task"] / "2.0"), lint(root / "pairs" / row["task"] / "2.1")
        pairs.append(compare_pair(row, old, new))
    for row in read_csv(root / "tb2-unchanged-dev.csv"):
        result = lint(root / "controls" / row["task"])
        controls.append(control_row(row["task"], result, judged))
    rules = per_rule(pairs, controls)
    if not args.json_only:
        show(Console(width=160), pairs, controls, rules)
    named = sum(1 for p in pairs if p["named"])
    flagged = sum(1 for c in controls if c["flagged"])
    unjudged = {c["task"]: c["serious_unjudged"] for c in controls if c["serious_unjudged"]}
    errors = {p["task"]: p["errors"] for p in pairs if p["errors"]} | {
        c["task"]: c["error"] for c in controls if c["error"]
    }
    goal_met = named >= GOALS["pairs_named_min"] and flagged <= GOALS["controls_flagged_max"] and not unjudged
    result = {
        "pairs": len(pairs),
        "pairs_named": named,
        "named": {p["task"]: p["named"] for p in pairs if p["named"]},
        "missed": [p["task"] for p in pairs if not p["named"]],
        "controls": len(controls),
        "controls_flagged": flagged,
        "controls_serious_unjudged": unjudged,
        "controls_serious_judged_real": {t: sorted(r) for t, r in judged.items()},
        "per_rule": rules,
        "load_errors": errors,
        "goals": GOALS,
        "goal_met": goal_met,
    }
    print(json.dumps(result))
    return 0 if goal_met else 1


if __name__ == "__main__":
    sys.exit(main())
