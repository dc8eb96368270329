"""Issue 44 item 2, for `qa analyze`: an unreadable file (a results.json nested deeper than the JSON parser
allows, a trial record of the wrong type) is named, path and what is wrong, in every output format (text, JSON,
markdown, HTML); a trial whose only record is unreadable is counted unreadable; everything else is read."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from envqa.app.analyze import analyze
from envqa.app.analyze_output import markdown, print_text
from envqa.app.report_html.analyze import render_analyze_html
from envqa.core.config import load_config
from envqa.demo.imported_runs import write_fixture_runs

pytestmark = pytest.mark.fast


def test_unreadable_files_are_named_in_every_format_and_the_rest_is_read(tmp_path):
    runs = write_fixture_runs(tmp_path / "fixture")
    run = runs.tb_runs / "2025-09-14__11-05-02"
    deep = run / "results.json"
    deep.write_text('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}")  # a RecursionError for json.loads
    lost = run / "hello-world" / "hello-world.1-of-3" / "results.json"
    lost.write_text(json.dumps(["not", "a", "trial"]))
    doc = analyze([runs.tb_runs], load_config(None, {"home": str(tmp_path / "qa-home")}), store=False)
    problems = {p["path"]: p for p in doc["problems"]}
    assert "nest" in problems[str(deep)]["message"]
    assert problems[str(lost)]["lost_trial"] is True
    assert doc["unreadable_trials"] == 1 and doc["trials"] == 53  # 54 written, one lost, the rest read
    json.dumps(doc)  # the JSON document holds it
    console = Console(record=True, width=300)
    print_text(doc, console)
    outputs = {"text": console.export_text(), "markdown": markdown(doc), "html": render_analyze_html(doc)}
    for name, text in outputs.items():
        for path in (deep, lost):
            assert str(path) in text, (name, path)
        assert "1 unreadable" in text, name


def test_qa_run_trials_from_names_unreadable_files_in_its_text_report():
    """`qa run --trials-from`: the sweep section of the text report names each file that could not be read."""
    from envqa.app.report import print_sweep

    model = {
        "n": 3,
        "pass_at_1": 0.33,
        "ci_low": 0.06,
        "ci_high": 0.79,
        "pass_at_k": {"1": 0.33},
        "infra": 0,
        "band_decision": "inside",
        "stop_reason": "imported",
        "spend": {"tokens": 0, "cost_usd": 0.0, "priced": False},
    }
    problem = {"path": "/runs/r1/results.json", "message": "JSON nested deeper than 1000 levels", "lost_trial": True}
    sweep = {
        "models": {"claude-code/opus": model},
        "overall": model,
        "band": [0.1, 0.3],
        "imported": {"problems": [problem]},
    }
    console = Console(record=True, width=300)
    print_sweep(sweep, console)
    text = console.export_text()
    assert (
        "could not read /runs/r1/results.json: JSON nested deeper than 1000 levels (trial counted unreadable)" in text
    )
