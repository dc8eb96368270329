"""report.html in a real headless Chromium, over reports of real `qa run`s of the examples."""

from __future__ import annotations

import json
import re

import pytest

from qa_testkit import open_report, run_qa

from .conftest import LONG_MODEL, artifacts_dir, run_dir


def report_of(env: dict, run_id: str) -> dict:
    return json.loads((run_dir(env, run_id) / "report.json").read_text())


def all_trials(report: dict) -> list[dict]:
    """Every trial of every version, once (the top-level list holds the current version's)."""
    seen = {
        t["trial_id"]: t for v in report.get("versions") or [] for t in v.get("trials") or [] if isinstance(t, dict)
    }
    seen.update({t["trial_id"]: t for t in report["trials"]})
    return list(seen.values())


def open_every_trace(page, trials: list[dict]) -> None:
    for t in trials:
        page.click(f"tr.trial-row[data-trial='{t['trial_id']}'] button.open")
        trace = page.wait_for_selector(f"tr.trace-row[data-trial='{t['trial_id']}'] .trace", timeout=10000)
        text = trace.inner_text()
        if t["agent"] == "solver":  # ATIF steps, with the tool calls
            assert trace.query_selector_all(".step"), t["trial_id"]
            assert "bash" in text and "observation" in text, t["trial_id"]
        elif t["outcome"] != "infra":  # oracle, nop, exploits: their artifact files (transcripts, verifier output)
            assert "verifier/" in text, t["trial_id"]


def point_value(page, model: str, version: str) -> float:
    """A chart point's pass@1 as drawn: its position read back through the axis."""
    svg = page.locator("#timeline svg")
    y0, y1 = float(svg.get_attribute("data-y0")), float(svg.get_attribute("data-y1"))
    p = page.locator(f"#timeline circle.point[data-version='{version}'][data-model='{model}']")
    assert p.count() == 1, (model, version)
    return (float(p.get_attribute("cy")) - y0) / (y1 - y0)


def test_end_of_run_summary_names_the_report_and_never_cuts_a_model(sweep_run, qa_env_session, loop_run):
    html = run_dir(qa_env_session, "sweep-run") / "report.html"
    assert f"report: {html}" in sweep_run.stdout and html.is_file()
    assert f"anthropic/{LONG_MODEL}" in sweep_run.stdout  # whole, in a table at the default 80 columns
    assert loop_run["report_html"] == str(run_dir(qa_env_session, "loop-run") / "report.html")


@pytest.mark.parametrize("run_id", ["sweep-run", "loop-run"])
def test_real_run_report_renders_and_every_trace_opens(sweep_run, loop_run, qa_env_session, page, run_id):
    report = report_of(qa_env_session, run_id)
    open_report(page, run_dir(qa_env_session, run_id) / "report.html")
    assert page.inner_text("#verdict .badge") == report["verdict"]
    trials = all_trials(report)
    assert page.locator("tr.trial-row").count() == len(trials)
    for v in report.get("versions") or []:
        for f in v["findings"]:  # each version's findings, with their evidence
            card = page.locator(f".finding[data-version='{v['version']}'][data-rule='{f['rule']}']")
            assert card.count() == 1 and f["message"] in card.inner_text()
            for e in f["evidence"][:3]:  # long evidence is collapsed: in the page, one click away
                assert e.splitlines()[0] in card.text_content()
    open_every_trace(page, trials)
    page.screenshot(path=str(artifacts_dir() / f"report-{run_id}.png"), full_page=True)
    assert page.errors == []


def test_chart_points_match_the_runs_json(sweep_run, qa_env_session, page):
    report = report_of(qa_env_session, "sweep-run")
    sweep, version = report["sweep"], report["environment"]["version"]
    open_report(page, run_dir(qa_env_session, "sweep-run") / "report.html")
    assert page.locator("#timeline circle.point").count() == len(sweep["models"]) == 2
    for model, m in sweep["models"].items():
        assert point_value(page, model, version) == pytest.approx(m["pass_at_1"], abs=1e-6)
    assert sweep["models"][f"anthropic/{LONG_MODEL}"]["pass_at_1"] == 1.0
    assert sweep["models"]["anthropic/wrong"]["pass_at_1"] == 0.0
    svg = page.locator("#timeline svg")
    y0, y1 = float(svg.get_attribute("data-y0")), float(svg.get_attribute("data-y1"))
    band = page.locator("#timeline rect.band")  # the band shaded between its two pass rates
    top, height = float(band.get_attribute("y")), float(band.get_attribute("height"))
    assert (top - y0) / (y1 - y0) == pytest.approx(sweep["band"][1])
    assert (top + height - y0) / (y1 - y0) == pytest.approx(sweep["band"][0])
    assert page.errors == []


def test_two_version_report_of_a_real_loop(loop_run, qa_env_session, page):
    report = loop_run
    v1, v2 = report["versions"]
    assert v2["parent"] == v1["version"] and v2["patch"]
    open_report(page, run_dir(qa_env_session, "loop-run") / "report.html")
    assert report["stop_reason"] in page.inner_text("#verdict")
    page.screenshot(path=str(artifacts_dir() / "report-two-versions-top.png"))  # verdict, timeline, labels
    # timeline: one point per model per version, at that version's pass@1
    for v in (v1, v2):
        for model, m in v["sweep"]["models"].items():
            assert point_value(page, model, v["version"]) == pytest.approx(m["pass_at_1"], abs=1e-6)
    # labels per version: each version's bar counts its labelled trials
    for v in (v1, v2):
        bar = page.locator(f"#labels tr[data-version='{v['version']}'] .bar span")
        assert sum(int(bar.nth(i).get_attribute("data-count")) for i in range(bar.count())) == len(v["trials"])
    # the revision's diff, highlighted, with the gate's checks and the approval
    rev = page.locator(f".revision[data-version='{v2['version']}']")
    added = [ln for ln in v2["patch"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert added and rev.locator(".diff .add").all_inner_texts() == added
    proposal = next(p for p in report["proposals"] if p["candidate_version"] == v2["version"])
    assert rev.locator(".gate tr").count() == len(proposal["gate"]["checks"])
    assert rev.locator(".gate .g-fail").count() == sum(not c["passed"] for c in proposal["gate"]["checks"])
    for value in v2["approval"].values():
        if isinstance(value, str) and value:
            assert value in rev.inner_text()
    # v1's findings are listed under v1, and v2 (the fix adopted) has none of v1's exploit
    assert page.locator(f".finding[data-version='{v1['version']}']").count() == len(v1["findings"]) > 0
    # a cited step is highlighted, and the label's evidence link lands on it
    trial = next(t for t in all_trials(report) if (t.get("label") or {}).get("evidence") and t["agent"] == "solver")
    step_id = trial["label"]["evidence"][0]["step_id"]
    page.click(f"tr.trial-row[data-trial='{trial['trial_id']}'] a.label-link")
    step = page.wait_for_selector(f"#step-{trial['trial_id']}-{step_id}")
    assert "cited" in step.get_attribute("class")
    assert step.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 244, 194)"
    assert page.locator(f"tr.trace-row[data-trial='{trial['trial_id']}'] .step.cited").count() == 1
    page.click(f"tr.trace-row[data-trial='{trial['trial_id']}'] a.cite[data-step='{step_id}']")
    assert "flash" in step.get_attribute("class") and step.is_visible()
    page.screenshot(path=str(artifacts_dir() / "report-two-versions.png"), full_page=True)
    assert page.errors == []


def test_qa_report_command(loop_run, qa_env_session, tmp_path):
    dest = tmp_path / "out" / "r.html"
    proc = run_qa(["report", "loop-run", "--html", str(dest), "--json"], qa_env_session)
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["html"] == str(dest) and body["bytes"] == dest.stat().st_size
    page_text = dest.read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=\"(?!data:)|<img", page_text)  # one file: nothing fetched
    missing = run_qa(["report", "no-such-run"], qa_env_session)
    assert missing.returncode == 2 and "no-such-run" in missing.stderr and "report.json" in missing.stderr
    assert not (run_dir(qa_env_session, "no-such-run")).exists()


def test_report_is_written_at_the_approval_checkpoint(waiting_run, qa_env_session, page):
    html = run_dir(qa_env_session, "waiting-run") / "report.html"
    assert waiting_run["verdict"] == "awaiting_approval" and waiting_run["report_html"] == str(html)
    pending = waiting_run["awaiting_approval"]
    open_report(page, html)
    assert "awaiting_approval" in page.inner_text("#verdict .badge")
    assert "qa approve waiting-run" in page.inner_text("#verdict")
    block = page.locator(f".revision[data-proposal='{pending['proposal']['proposal_id']}']")
    assert "awaiting approval" in block.inner_text()
    added = [ln for ln in pending["diff"].splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    assert added and block.locator(".diff .add").all_inner_texts() == added
    assert block.locator(".gate tr").count() == len(pending["gate"]["checks"])
    assert page.errors == []
