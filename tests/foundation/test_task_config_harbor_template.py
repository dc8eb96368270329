"""`qa lint` on Harbor's own template task (harbor 0.26.0 `harbor/cli/template-task`, copied verbatim with its
license: tests/fixtures/harbor-template-task/NOTICE): its schema is accepted, and every finding is about the
template's empty placeholders (test.sh, instruction.md, [metadata]), none about its format (issue 23)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from envqa.core.task_config import TaskConfig
from envqa.core.task_config_keys import unknown_keys
from qa_testkit import run_qa

pytestmark = pytest.mark.fast

TEMPLATE = Path(__file__).resolve().parents[1] / "fixtures" / "harbor-template-task" / "task"


def test_the_template_schema_is_accepted_as_is():
    config = TaskConfig.model_validate(tomllib.loads((TEMPLATE / "task.toml").read_text()))
    assert config.schema_version == "1.4" and unknown_keys(config) == []


def test_qa_lint_on_the_template_reports_only_its_empty_placeholders(qa_env):
    res = run_qa(["lint", str(TEMPLATE), "--json"], qa_env, timeout=120)
    assert res.returncode == 1, res.stderr  # findings, not exit 2: the format loads
    found = sorted((f["rule"], f["location"], f["severity"]) for f in json.loads(res.stdout)["findings"])
    assert found == [
        ("instruction-empty", "instruction.md", "critical"),  # the template's instruction.md is empty too
        ("solution-empty", "solution/solve.sh", "error"),  # its solve.sh: comments only (issue 44)
        ("task-metadata-missing", "task.toml", "info"),  # its [metadata] table is empty
        ("verifier-script-empty", "tests/test.sh", "critical"),  # the empty test.sh: comments only
    ]
    serious = [f for f in json.loads(res.stdout)["findings"] if f["severity"] != "info"]
    assert {f["location"] for f in serious} == {"tests/test.sh", "instruction.md", "solution/solve.sh"}
    assert not any(f["rule"].startswith("task-config") for f in json.loads(res.stdout)["findings"])


def test_qa_run_refuses_the_template_for_its_empty_instruction(qa_env):
    res = run_qa(["run", str(TEMPLATE), "--json"], qa_env, timeout=120)
    assert res.returncode == 2 and json.loads(res.stdout)["path"] == str(TEMPLATE / "instruction.md")
