"""The detection table: `qa run --json` (no model) on every example; expected rules fire, clean stays clean.

Every example under examples/ declares in qa-expected.json what must be reported. A flawed example must
report at least its expected rules and labels; a clean one (both lists empty) must report no finding
above `info`. The table (expected, found, extra, seconds) is printed at the end of the session.
"""

from __future__ import annotations

import json

import pytest

from analyst.label_checks import check_trial_labels

from .conftest import EXAMPLES, expected

EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "qa-expected.json").is_file())
TABLE: dict[str, dict] = {}


def _run(name: str, example_reports) -> tuple[int, dict, float]:
    run = example_reports(name)  # the session's one run of the example (qa_testkit.example_report)
    if run["report"] is None:
        pytest.fail(f"qa run {name}: exit {run['code']}, no JSON report\n{run['stderr']}")
    return run["code"], run["report"], run["seconds"]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_detection(name, example_reports, record_property):
    want = expected(name)
    code, report, seconds = _run(name, example_reports)  # one run: exit 3 (infra) fails the test, never re-run
    serious = [f for f in report["findings"] if f["severity"] != "info"]
    check_trial_labels(report, flawed=bool(want["rules"]))  # issue 11: every trial labelled; exploit passes shortcut
    found = sorted({f["rule"] for f in serious})
    labels = sorted({f["label"] for f in serious})
    TABLE[name] = {
        "expected": sorted(want["rules"]),
        "found": found,
        "seconds": round(seconds, 1),
        "missing": sorted(set(want["rules"]) - set(found)),
        "extra": sorted(set(found) - set(want["rules"])),
        "inconclusive": sorted({o["outcome"] for o in report.get("inconclusive") or []}),
    }
    record_property("detection_row", {"name": name, **TABLE[name]})  # the table travels with the report (xdist)
    # Coverage: every probe that did not run says why (nothing is skipped silently).
    assert report["coverage"] and all(c["reason"] for c in report["coverage"] if c["status"] != "ran")
    if want.get("notes"):  # probe notes at info the run must carry (issue 35: tolerance by design is only a note;
        # "info" is for lint's info rules, tests/probes/test_task_rules.py)
        notes = {f["rule"] for f in report["findings"] if f["severity"] == "info"}
        assert set(want["notes"]) <= notes, f"{name}: expected notes {want['notes']}, found {sorted(notes)}"
    for rule, subtype in (want.get("subtypes") or {}).items():  # the cause a finding must name (issue 35)
        named = {f.get("subtype") for f in report["findings"] if f["rule"] == rule}
        assert named == {subtype}, f"{name}: {rule} should name subtype {subtype}, named {named}"
    # "absent": rules a look-alike must not report at any severity (the flaw its twin has, issue 35)
    wrongly = set(want.get("absent", [])) & {f["rule"] for f in report["findings"]}
    assert not wrongly, f"{name}: reported {sorted(wrongly)}, which its qa-expected.json says are absent"
    if want.get("inconclusive"):  # could not judge: exit 3, verdict incomplete, and never a finding
        assert code == 3 and report["verdict"] == "incomplete", f"{name}: exit {code}, {report['verdict']}"
        assert set(want["inconclusive"]) <= set(TABLE[name]["inconclusive"]), report.get("incomplete")
        assert serious == [], f"inconclusive reported as findings on {name}: {json.dumps(serious, indent=1)[:3000]}"
        return
    assert code in (0, 1), f"qa run exited {code}: {report.get('incomplete')}"
    if not want["rules"]:
        assert serious == [], f"false alarm on clean example {name}: {json.dumps(serious, indent=1)[:3000]}"
        assert code == 0 and report["verdict"] == "clean"
        return
    assert set(want["rules"]) <= set(found), f"{name}: expected {want['rules']}, found {found}"
    assert set(want["labels"]) <= set(labels)
    assert code == 1 and report["verdict"] == "findings"
    for f in serious:
        if f["rule"] in want["rules"]:
            assert f["evidence"] and f["message"], f"{f['rule']} has no evidence"
