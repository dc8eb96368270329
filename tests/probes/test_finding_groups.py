"""The repeats of one rule in one file are one finding that lists every place (issue 52 item 3).

Ten unpinned pip installs in a Dockerfile are one thing to change: `qa lint` (lint_findings) and the run graph's
findings (the reducer every node appends through) both hand their readers one finding per (rule, file, severity,
subtype), its first place as `location`, every place in `locations` and every line in `evidence`.
"""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from envqa.app.report import print_findings
from envqa.core.environment import load_environment
from envqa.core.finding_groups import group_repeats
from envqa.core.models import Finding, Severity
from envqa.graphs.gate_rules import fired_rules
from envqa.graphs.loop_state import per_version_findings
from envqa.probes.static.task_schema import lint_findings

from .conftest import OPEN_NETWORK_TOML, run_qa, write_env

pytestmark = pytest.mark.fast

PINS = "FROM debian:bookworm\nRUN pip install requests\nRUN pip install flask\nWORKDIR /app\nRUN pip install click\n"
# Unpinned installs at verify time are warnings (at image build, info): the convention's dataset installs there.
VERIFY_PINS = "#!/bin/bash\npip install requests\npip install flask\npip install click\npytest /tests\n"
# The fetch rules (probes/static/fetch_rules.py) already say one finding per file with every place; grouping
# leaves such a finding as it is. A rule of one finding per place is grouped here: each unknown key of task.toml.


def pin(line: int, file: str = "environment/Dockerfile", severity: Severity | None = None) -> Finding:
    return Finding.of(
        "unpinned-python-dependency",
        f"pip installs p{line} without a pinned version",
        evidence=[f"{file}:{line}: pip install p{line}"],
        location=f"{file}:{line}",
        severity=severity,
    )


def test_lint_groups_a_files_repeats_and_keeps_files_apart(tmp_path):
    env = write_env(
        tmp_path, environment__Dockerfile=PINS, environment__requirements_txt="numpy\npandas\nclick==8.1.7\n"
    )
    found = [f for f in lint_findings(load_environment(env)) if f.rule == "unpinned-python-dependency"]
    docker, reqs = found  # one finding per file
    assert docker.location == "environment/Dockerfile:2"
    assert docker.locations == ["environment/Dockerfile:2", "environment/Dockerfile:3", "environment/Dockerfile:5"]
    assert [e.split(": ", 1)[0] for e in docker.evidence] == docker.locations
    assert docker.message.startswith("environment/Dockerfile installs requests, flask, click without a pinned")
    assert reqs.locations == ["environment/requirements.txt:1", "environment/requirements.txt:2"]


def test_a_finding_alone_in_its_file_is_unchanged(tmp_path):
    env = write_env(tmp_path, environment__Dockerfile="FROM debian:bookworm\nRUN pip install requests\n")
    (one,) = [f for f in lint_findings(load_environment(env)) if f.rule == "unpinned-python-dependency"]
    assert one.locations == [] and one.location == "environment/Dockerfile:2" and "places" not in one.message


def test_severity_and_subtype_split_groups_and_grouping_is_idempotent():
    info = pin(7, severity=Severity.INFO)
    caused = pin(8).model_copy(update={"subtype": "other-cause"})
    grouped = group_repeats([pin(2), info, pin(3), caused, pin(4, "tests/test.sh")])
    assert [(f.severity, f.location, len(f.locations)) for f in grouped] == [
        (Severity.WARNING, "environment/Dockerfile:2", 2),
        (Severity.INFO, "environment/Dockerfile:7", 0),
        (Severity.WARNING, "environment/Dockerfile:8", 0),
        (Severity.WARNING, "tests/test.sh:4", 0),
    ]
    assert group_repeats(grouped) == grouped
    again = group_repeats([grouped[0], pin(3), pin(9)])[0]  # a re-sent place is not counted twice; a new one is
    assert again.locations == ["environment/Dockerfile:2", "environment/Dockerfile:3", "environment/Dockerfile:9"]
    assert again.message.count("places") == 1 and "the first of 3 places" in again.message


def test_places_without_a_line_group_too():
    mounts = [
        Finding.of(
            "compose-writable-bind-mount",
            f"service {s!r} mounts ./data writable",
            location="environment/docker-compose.yaml",
            evidence=[f"environment/docker-compose.yaml: services.{s}.volumes: ./data:/data"],
        )
        for s in ("main", "db")
    ]
    (one,) = group_repeats(mounts)
    assert one.locations == ["environment/docker-compose.yaml"] * 2
    assert "environment/docker-compose.yaml: service 'db' mounts ./data writable" in one.evidence  # which one
    assert len(one.evidence) == 3


def test_the_run_graphs_reducer_groups_across_updates_and_leaves_singletons_as_they_are():
    lone = Finding.of("oracle-fails", "the oracle fails").public()
    lone.pop("locations")  # a record written before the field: left byte for byte
    state = per_version_findings(None, [lone, pin(2).public()])
    state = per_version_findings(state, [pin(3).public(), pin(5).public()])
    assert state[0] == lone
    (grouped,) = [f for f in state if f["rule"] == "unpinned-python-dependency"]
    assert grouped["locations"] == [f"environment/Dockerfile:{n}" for n in (2, 3, 5)]
    assert per_version_findings(state, []) == state  # grouping again groups nothing twice
    # the gate reads rules, not places: what fired is the same grouped or not
    findings = [Finding.model_validate(f) for f in state]
    assert fired_rules(findings) == ["oracle-fails", "unpinned-python-dependency"]


def test_text_and_json_outputs_show_every_place(tmp_path, qa_env):
    env = write_env(tmp_path, environment__Dockerfile=PINS)
    console = Console(record=True, width=200)
    print_findings([f.public() for f in lint_findings(load_environment(env))], console)
    assert "environment/Dockerfile:2, environment/Dockerfile:3, environment/Dockerfile:5" in console.export_text()
    res = run_qa(["lint", str(env), "--json"], qa_env)
    pins = [f for f in json.loads(res.stdout)["findings"] if f["rule"] == "unpinned-python-dependency"]
    assert len(pins) == 1 and len(pins[0]["locations"]) == 3 and len(pins[0]["evidence"]) == 3


def test_qa_lint_over_a_folder_of_tasks_says_a_convention_once(tmp_path, qa_env):
    for i in range(6):
        write_env(tmp_path / f"task-{i}", tests__test_sh=VERIFY_PINS, task_toml=OPEN_NETWORK_TOML)
    write_env(tmp_path / "broken", task_toml='version = "1.0"\n[agent]\ntimeout_sec = "soon"\n')
    res = run_qa(["lint", str(tmp_path), "--json"], qa_env)
    assert res.returncode == 1, res.stderr
    report = json.loads(res.stdout)
    (conv,) = report["conventions"]
    assert conv["summary"] == "unpinned-python-dependency on 6 of 7 tasks: a convention of this dataset"
    assert conv["task_names"] == [f"task-{i}" for i in range(6)]
    assert conv["example"]["evidence"].count("pip install") == 3  # the example is the task's one grouped finding
    assert not [f for t in report["tasks"] for f in t["findings"] if f["rule"] == "unpinned-python-dependency"]
    assert [(t["name"], t["exit_code"]) for t in report["tasks"]][0] == ("broken", 2)
    text = run_qa(["lint", str(tmp_path)], qa_env)
    assert "unpinned-python-dependency on 6 of 7 tasks" in text.stdout and "broken: invalid" in text.stdout
    assert "pip installs" not in text.stdout
