"""task_row(): the one mapping from a task's run report (as the store holds it) to its dataset row, checked on the
reports of real runs of the examples (the runner on the fake sandbox backend: tests/report/fake_dataset.py)."""

from __future__ import annotations

import pytest

from envqa.app.dataset_rows import FIXED, proposal_state, split_location, task_row, top_finding
from envqa.core.verdicts import exit_code

from .fake_dataset import BROKEN, fake_dataset

pytestmark = pytest.mark.fast  # the fast tier: the fake sandbox backend, no Docker, Redis or browser


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    return fake_dataset(tmp_path_factory)


def row(ds, name):
    return next(r for r in ds.report.tasks if r.name == name)


def test_each_row_carries_its_runs_verdict_and_exit_code(ds):
    for name, report in ds.run_reports.items():
        r = row(ds, name)
        assert (r.run_id, r.verdict, r.exit_code) == (f"run-{name}", report["verdict"], exit_code(report["verdict"]))
        assert r.report_html and r.report_html.endswith(f"run-{name}/report.html")
    assert {r.name: r.verdict for r in ds.report.tasks} == {
        "clean-wordfreq": "clean",
        "always-pass": "findings",
        "always-pass-waiting": "awaiting_approval",
        "always-pass-fixed": "clean",
        BROKEN: "invalid",
    }
    assert ds.report.exit_code == 1  # a task has findings (and one could not be loaded)


def test_findings_keep_rule_severity_and_location_split_into_file_and_line(ds):
    report, r = ds.run_reports["always-pass"], row(ds, "always-pass")
    assert [f.rule for f in r.findings] == [f["rule"] for f in report["findings"]]  # same order: by severity
    for f, src in zip(r.findings, report["findings"]):
        assert (f.label, f.severity, f.summary) == (src["label"], src["severity"], src["message"])
        assert f"{f.file}:{f.line}" == src["location"] if f.line else f.file == src["location"]
        assert src["evidence"][0].splitlines()[0] in f.evidence
    unconditional = next(f for f in r.findings if f.rule == "reward-written-unconditionally")
    assert (unconditional.file, unconditional.line) == ("tests/test.sh", 7)  # `echo 1 > ...` on line 7
    assert top_finding(r).severity == "critical"


def test_a_fixed_task_still_lists_what_its_first_version_showed(ds):
    """The adopted fix lives in qa's store, not in the task's files: version 1's findings stay on the row,
    marked as fixed, and the proposal says who approved it and carries the adopted diff."""
    report, r = ds.run_reports["always-pass-fixed"], row(ds, "always-pass-fixed")
    assert report["findings"] == [] and r.verdict == "clean"
    first = report["versions"][0]["findings"]
    assert [f.rule for f in r.findings] == [f["rule"] for f in first] and all(
        f.summary.startswith(FIXED) for f in r.findings
    )
    (p,) = r.proposals
    assert (p.state, p.gate, p.approved_by) == ("adopted", "passed", "auto")
    assert p.diff == report["versions"][1]["patch"] and "+find /logs/verifier -mindepth 1 -delete" in p.diff
    assert p.version == report["versions"][1]["version"] and set(p.addresses) == {f.rule for f in r.findings}
    assert proposal_state(r) == "adopted by auto"


def test_a_waiting_task_shows_the_pending_proposal_and_its_diff(ds):
    report, r = ds.run_reports["always-pass-waiting"], row(ds, "always-pass-waiting")
    (p,) = r.proposals
    assert (p.state, p.gate, p.approved_by) == ("awaiting_approval", "passed", None)
    assert p.diff == report["awaiting_approval"]["proposal"]["diff"] != ""
    assert not any(f.summary.startswith(FIXED) for f in r.findings)


def test_rows_without_a_report():
    bad = task_row("tasks/x", "x", None, None, None, None, error="tasks/x/task.toml: [agent] timeout_sec: not a number")
    assert (bad.verdict, bad.exit_code, bad.error) == (
        "invalid",
        2,
        "tasks/x/task.toml: [agent] timeout_sec: not a number",
    )
    infra = task_row("tasks/y", "y", "run-y", None, 3.0, None, error="docker: no space left", exit_code=3)
    assert (infra.verdict, infra.exit_code) == ("incomplete", 3)
    pending = task_row("tasks/z", "z", "run-z", None, None, None)
    assert (pending.verdict, pending.exit_code) == (None, 3)


@pytest.mark.parametrize(
    "location, expected",
    [
        ("tests/test.sh:4", ("tests/test.sh", 4)),
        ("task.toml", ("task.toml", None)),
        ("tests/", ("tests/", None)),
        ("environment/Dockerfile:12", ("environment/Dockerfile", 12)),
        (None, (None, None)),
        ("", (None, None)),
    ],
)
def test_split_location(location, expected):
    assert split_location(location) == expected
