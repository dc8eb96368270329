"""`qa run TASK --trials-from JOB` on Docker (issue 33): one run of a clean example with a Harbor job of three
agents x k trials on it, and every assertion read from that one run: the imported trials in the sweep per
agent/model with Wilson intervals, the cross-trial findings, the deterministic labels (the copied pass is a
shortcut), the stale trials kept but not counted, the report (JSON and HTML) and the exit code. Nothing re-run:
no solver model is configured, so every solver trial in the report is imported."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace

import pytest

from envqa.core.task_checksum import harbor_task_checksum
from envqa.demo.imported_runs import fixture_plans
from envqa.demo.imported_runs_render import write_harbor_job
from qa_testkit import copy_example, open_report, run_qa

EXAMPLE = "tb1-clean"


def _job(root, task_dir):
    """csv-report's and port-config's trials as trials of this task (port-config's as attempts 4-6), their
    checksum the task's; hello-world's (attempts 7-9) keep a checksum of another version: stale."""
    plans = fixture_plans()
    mine = [replace(p, task=EXAMPLE) for p in plans if p.task == "csv-report"]
    mine += [replace(p, task=EXAMPLE, attempt=p.attempt + 3) for p in plans if p.task == "port-config"]
    old = [replace(p, task=EXAMPLE, attempt=p.attempt + 6) for p in plans if p.task == "hello-world"]
    job = write_harbor_job(root, "job-on-example", mine + old)
    current = harbor_task_checksum(task_dir)
    stale_names = {p.harbor_trial_name() for p in old}
    for result in job.glob("*/result.json"):
        if result.parent.name not in stale_names:
            result.write_text(json.dumps({**json.loads(result.read_text()), "task_checksum": current}))
    return job


@pytest.fixture(scope="module")
def run(tmp_path_factory, module_store, base_image):
    root = tmp_path_factory.mktemp("trials-from")
    task = copy_example(EXAMPLE, root / EXAMPLE)
    job = _job(root / "jobs", task)
    env = module_store.env({**os.environ, "QA_HOME": str(root / "qa-home")})
    env.pop("REDIS_URL", None)
    proc = run_qa(["run", str(task), "--trials-from", str(job), "--json", "--oracle-runs", "1"], env, timeout=900)
    return proc, json.loads(proc.stdout or "{}"), root / "qa-home"


def test_imported_trials_join_the_sweep_and_decide_the_verdict(run):
    proc, report, home = run
    assert proc.returncode == 1, proc.stderr[-3000:]  # findings
    assert report["verdict"] == "findings"
    sweep = report["sweep"]
    models = sweep["models"]
    assert set(models) == {
        "claude-code/anthropic/claude-opus-4-1",
        "terminus-2/openai/gpt-5",
        "codex/openai/gpt-5-codex",
    }
    for m in models.values():  # csv-report: attempt 1 passes; port-config: every attempt passes
        assert (m["n"], m["passes"], m["stop_reason"]) == (6, 4, "imported")
        assert 0 < m["ci_low"] < 4 / 6 < m["ci_high"] < 1
    assert (sweep["overall"]["n"], sweep["overall"]["passes"]) == (18, 12)
    assert report["band"]["measured"] and report["band"]["call"] == "above"
    assert sweep["imported"]["counted"] == 18 and sweep["imported"]["stale"] == 9  # another version: kept apart
    assert "ran another version" in sweep["imported"]["stale_note"]

    rules = {f["rule"]: f for f in report["findings"]}
    assert {"test-fails-alone", "converging-wrong-answers", "copied-verifier-values"} <= set(rules)
    assert not {"outlier-pass", "agent-never-ran", "trajectory-tampers-verifier"} & set(rules)
    assert rules["test-fails-alone"]["severity"] == "error" and len(rules["test-fails-alone"]["trial_ids"]) == 6

    trials = {t["trial_id"]: t for t in report["trials"]}
    copied = trials[rules["copied-verifier-values"]["trial_ids"][0]]
    assert copied["source"] == "imported" and copied["provenance"]["agent"] == "claude-code"
    assert copied["label"]["label"] == "shortcut" and copied["label"]["source"] == "deterministic"
    imported = [t for t in trials.values() if t.get("source") == "imported"]
    assert len([t for t in imported if not t["provenance"]["stale"]]) == 18
    assert all(t["agent"] != "solver" or t.get("source") == "imported" for t in trials.values())  # nothing re-run

    alone = [r for r in report["cross_trial"]["tests"] if r["fails_alone"]]
    assert {r["agent"] for r in alone} == set(models) and all(r["fails_alone"] == 2 for r in alone)


def test_the_html_report_carries_the_cross_trial_section(run):
    _, report, home = run
    html = (home / "runs" / report["run_id"] / "report.html").read_text()
    data = json.loads(re.search(r'<script type="application/json" id="qa-data">(.*?)</script>', html, re.S).group(1))
    assert set(data["cross_trial"]["models"]) == set(report["sweep"]["models"])
    assert data["cross_trial"]["imported"]["counted"] == 18 and 'id="cross-trial"' in html
    assert "Across trials" in html  # cross_trial.js, inlined


def test_the_report_page_draws_the_cross_trial_tables(run, page):
    _, report, home = run
    open_report(page, home / "runs" / report["run_id"] / "report.html")
    rows = page.locator("#agent-rates tr").count()
    assert rows == 1 + len(report["sweep"]["models"])  # the header and one row per agent/model
    assert page.locator("#agent-rates").inner_text().count("imported") == 3
    assert page.locator("#test-table tr.alone").count() == 3  # test_total_two_decimals fails alone, per agent
    assert "18 trial(s) counted, 9 stale" in page.locator("#imported-note").inner_text()
    assert page.errors == []
