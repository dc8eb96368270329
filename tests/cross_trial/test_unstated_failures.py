"""Issue 53 item 3: failures read against the assertion model. A Harbor panel we write here (3 setups, one trial each,
in `<agent>-<model>__<score>/jobs/<timestamp>/` folders) on a task whose test passes `--limit` to the agent's program:
where the instruction never states the flag, the failures are ambiguity (failures-on-unstated-requirement, citing
the instruction, the check's line and the trials) and the no-pass task is `underspecified`; where it does, the same
failures are capability and the task is `hard`. The failing-test mapping and the per-trial kinds, on their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from envqa.app.analyze import analyze
from envqa.app.analyze_output import print_text
from envqa.app.report_html.analyze import render_analyze_html
from envqa.core.config import load_config
from envqa.core.imported import ImportedTrial, TestOutcome
from envqa.core.models import Outcome
from envqa.core.registry.rules import get_rule
from envqa.core.task_checksum import harbor_task_checksum
from envqa.core.task_model.unstated_checks import TestChecks, UnstatedTerm
from envqa.demo.imported_runs_render import AgentSpec, TrialPlan, write_harbor_job
from envqa.probes.cross_trial.failures import RULE, checks_of, classify, test_key

pytestmark = pytest.mark.fast

TASK = "top-words"
INSTRUCTION = (
    "Write `/app/top.py`: it reads `/app/words.txt` and prints each distinct word with its count, most frequent "
    "first, one `word count` pair per line.\n"
)
STATES_FLAG = "With `--limit N` it prints only the first N lines.\n"
TESTS = """import subprocess

EXPECTED = ["the 3", "quick 2", "fox 1"]


def test_prints_counts():
    out = subprocess.run(["python3", "/app/top.py"], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == EXPECTED


def test_limit():
    cmd = ["python3", "/app/top.py", "--limit", "2"]
    lines = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    assert lines == EXPECTED[:2]
"""
SOLVE = """#!/bin/bash
cat > /app/top.py <<'EOF'
import sys
from collections import Counter

words = Counter(open("/app/words.txt").read().split())
n = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
for w, c in words.most_common(n):
    print(w, c)
EOF
"""
TEST_SH = """#!/bin/bash
mkdir -p /logs/verifier
python3 -m pytest -rA /tests/test_outputs.py && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
"""
TOML = """version = "1.0"

[metadata]
author_name = "envqa"
difficulty = "easy"
category = "text"
tags = ["cli"]

[agent]
timeout_sec = 300.0

[verifier]
timeout_sec = 60.0
"""
SETUPS = [
    AgentSpec("claude-code", "2.0.14", "anthropic", "claude-opus-4-1"),
    AgentSpec("codex", "0.46.0", "openai", "gpt-5-codex"),
    AgentSpec("terminus-2", "2.0.0", "google", "gemini-2.5-pro"),
]
CALL = "subprocess.CalledProcessError: Command '['python3', '/app/top.py', '--limit', '2']' returned non-zero exit status 2."
# Each setup fails test_limit its own way (no shared message, no shared wrong value); the third fails both tests.
FAILURES = [
    {"test_limit": f"{CALL}\nusage: top.py [-h]\ntop.py: error: unrecognized arguments: --limit 2"},
    {
        "test_limit": "AssertionError: assert ['the 3', 'quick 2', 'fox 1'] == ['the 3', 'quick 2']\n  Left contains one more item"
    },
    {
        "test_prints_counts": "AssertionError: assert ['the: 3', 'quick: 2', 'fox: 1'] == ['the 3', 'quick 2', 'fox 1']",
        "test_limit": "AssertionError: assert ['the: 3', 'quick: 2', 'fox: 1'] == ['the 3', 'quick 2']",
    },
]


def write_task(root: Path, *, states_flag: bool) -> Path:
    task = root / "tasks" / TASK
    files = {
        "instruction.md": INSTRUCTION + (STATES_FLAG if states_flag else ""),
        "task.toml": TOML,
        "environment/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY words.txt /app/words.txt\n",
        "environment/words.txt": "the quick fox the quick the\n",
        "solution/solve.sh": SOLVE,
        "tests/test.sh": TEST_SH,
        "tests/test_outputs.py": TESTS,
    }
    for rel, text in files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text)
    return task


def write_panel(root: Path, *, states_flag: bool, failures: list[dict] = FAILURES) -> tuple[Path, Path]:
    """The task (tasks/top-words) and its runs: one Harbor job per setup, one failed trial each; returns
    (runs folder, tasks folder)."""
    task = write_task(root, states_flag=states_flag)
    checksum = harbor_task_checksum(task)
    runs = root / "runs"
    for agent, failed in zip(SETUPS, failures, strict=True):
        tests = [
            (n, "failed", failed[n]) if n in failed else (n, "passed", "") for n in ("test_prints_counts", "test_limit")
        ]
        plan = TrialPlan(
            task=TASK, agent=agent, attempt=1, n_attempts=1, tests=tests, instruction=INSTRUCTION, reward=0.0
        )
        plan.commands = [("cat /app/words.txt", "the quick fox the quick the\n"), ("python3 /app/top.py", "the 3\n")]
        job = write_harbor_job(runs / f"{agent.name}-{agent.model}__0.00" / "jobs", "2026-11-20__10-00-00", [plan])
        for result in job.glob("*/result.json"):  # the trials ran this very version of the task
            data = json.loads(result.read_text())
            data["task_checksum"] = checksum
            result.write_text(json.dumps(data, indent=4))
    return runs, task.parent


def _doc(root: Path, *, states_flag: bool, failures: list[dict] = FAILURES) -> dict:
    runs, tasks = write_panel(root, states_flag=states_flag, failures=failures)
    return analyze([runs], load_config(None, {"home": str(root / "qa-home")}), tasks=[tasks], store=False)


def _task(doc: dict) -> dict:
    assert doc["problems"] == [] and doc["unmatched"] == {}, (doc["problems"], doc["unmatched"])
    (t,) = doc["tasks"]
    assert t["trials"] == 3 and t["stale"] == 0 and t["panel"]["setups"] == 3
    return t


def test_a_panel_failing_on_an_unstated_flag_is_ambiguity_citing_instruction_check_and_trials(tmp_path):
    doc = _doc(tmp_path, states_flag=False)
    t = _task(doc)
    (f,) = [f for f in t["findings"] if f["rule"] == RULE]
    assert f["label"] == "ambiguity" and f["severity"] == "warning"
    assert "3 of 3 failed trials, in 3 of 3 setups" in f["message"] and "--limit" in f["message"]
    assert f["location"] == f"{TASK}: tests/test_outputs.py:14"
    first = f["evidence"][0]
    assert "check tests/test_outputs.py:14" in first and "instruction: instruction.md:1: Write `/app/top.py`" in first
    assert "names the program, not --limit" in first
    names = sorted(p.name for p in (tmp_path / "runs").glob("*/jobs/*/top-words__*"))
    assert len(names) == 3 and len(f["trial_ids"]) == 3
    assert sorted(e.split()[1] for e in f["evidence"] if e.startswith("trial ")) == names
    assert {x["kind"] for x in t["failures"]} == {"ambiguity"} and len(t["failures"]) == 3
    assert t["no_pass"]["kind"] == "underspecified"
    assert t["no_pass"]["evidence"].startswith(f"{RULE}: "), t["no_pass"]  # the failures, before the static finding
    assert sorted(t["no_pass"]["trials"]) == names
    assert doc["look_first"][0]["rule"] == RULE and sorted(doc["look_first"][0]["trials"]) == names
    console = Console(record=True, width=300)
    print_text(doc, console)
    text, html = console.export_text(), render_analyze_html(doc)
    assert f"failed trial {names[0]} (" in text and "): ambiguity: test_outputs.py::test_limit: the check at" in text
    assert 'class="badge kind-ambiguity">ambiguity</span>' in html and f"{RULE}</code>" in html


def test_the_clean_look_alike_states_the_flag_the_same_failures_are_capability_and_hard(tmp_path):
    t = _task(_doc(tmp_path, states_flag=True))
    assert [f["rule"] for f in t["findings"] if f["severity"] != "info"] == [], t["findings"]
    assert {x["kind"] for x in t["failures"]} == {"capability"}, t["failures"]
    assert "fails its check at tests/test_outputs.py:" in t["failures"][0]["why"]
    assert t["no_pass"]["kind"] == "hard"


def test_two_setups_of_three_are_short_of_evidence_and_say_so(tmp_path):
    runs, tasks = write_panel(tmp_path, states_flag=False)
    passed = next((runs / "terminus-2-gemini-2.5-pro__0.00").glob("jobs/*/top-words__*"))
    (passed / "verifier" / "test-stdout.txt").write_text(
        "PASSED test_outputs.py::test_prints_counts\nPASSED test_outputs.py::test_limit\n========== 2 passed in 0.1s ==========\n"
    )
    (passed / "verifier" / "reward.txt").write_text("1\n")
    data = json.loads((passed / "result.json").read_text())
    data["verifier_result"] = {"rewards": {"reward": 1.0}}
    (passed / "result.json").write_text(json.dumps(data))
    doc = analyze([runs], load_config(None, {"home": str(tmp_path / "qa-home")}), tasks=[tasks], store=False)
    t = _task(doc)
    assert RULE not in {f["rule"] for f in t["findings"]}
    assert (
        f"{RULE}: needs >= 3 setups failing a check that requires a term the instruction does not state, had 2"
        in (t["coverage"])
    )


def test_the_registry_row():
    row = get_rule(RULE)
    assert (row.label, str(row.severity), row.probe) == ("ambiguity", "warning", "cross_trial")


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("tests/test_outputs.py::test_limit", ("test_outputs", "test_limit")),
        ("test_outputs.py::TestCli::test_limit[2-3]", ("test_outputs", "test_limit")),
        ("test_limit", (None, "test_limit")),
        ("test_limit (test_outputs.TestCli)", ("test_outputs", "test_limit")),
        ("test_outputs.TestCli.test_limit", ("test_outputs", "test_limit")),
    ],
)
def test_a_failing_test_id_in_each_style(name, key):
    assert test_key(name) == key


def _checks() -> dict[str, TestChecks]:
    term = UnstatedTerm(
        "instruction-omits-tested-requirement", "key", "total_qty", "tests/test_b.py:9", "assert x", "i.md: never"
    )
    return {
        "tests/test_a.py::test_limit": TestChecks("tests/test_a.py::test_limit", ["tests/test_a.py:5"]),
        "tests/test_b.py::Case::test_limit": TestChecks(
            "tests/test_b.py::Case::test_limit", ["tests/test_b.py:9"], [term]
        ),
    }


def test_a_failing_test_maps_to_the_checks_of_its_module_or_of_every_module_when_unnamed():
    checks = _checks()
    assert [c.test for c in checks_of("test_b.py::Case::test_limit", checks)] == ["tests/test_b.py::Case::test_limit"]
    assert len(checks_of("test_limit", checks)) == 2
    assert checks_of("test_c.py::test_limit", checks) == []


def _trial(message: str, **kw) -> ImportedTrial:
    kw.setdefault("tests", [TestOutcome(name="test_a.py::test_limit", status="failed", message=message)])
    fields = {"trial_name": "t", "agent": "a", "model": "m"} | kw
    return ImportedTrial(source_format="harbor", path="/t", task_name="x", outcome=Outcome.FAIL, **fields)


def test_each_kind_of_failed_trial():
    checks = _checks()
    assert classify(_trial("assert 1 == 2"), checks)[0] == "capability"
    assert classify(_trial("ModuleNotFoundError: No module named 'numpy'"), checks)[0] == "brittleness"
    assert classify(_trial("", tests=[], agent_timed_out=True), checks)[0] == "infra"
    assert classify(_trial("assert 1 == 2", agent_timed_out=True), checks)[0] == "infra"
    b = [TestOutcome(name="test_b.py::Case::test_limit", status="failed", message="KeyError: 'total_qty'")]
    kind, why = classify(_trial("", tests=b), checks)
    assert kind == "ambiguity" and "tests/test_b.py:9 requires the key total_qty" in why


@pytest.mark.parametrize("states_flag,fires", [(False, True), (True, False)])
def test_qa_runs_own_solver_trials_are_read_against_the_task_too(tmp_path, states_flag, fires):
    """`qa run`'s sweep (probes/cross_trial/qa.py) reads its solver trials' ctrf.json against the same task model as
    `qa analyze --tasks` does: three models failing on the unstated flag fire the rule; the look-alike stays quiet."""
    from envqa.core.environment import load_environment
    from envqa.core.models import TrialResult
    from envqa.demo.imported_runs_render import ctrf
    from envqa.probes.cross_trial.qa import version_findings

    env = load_environment(write_task(tmp_path, states_flag=states_flag))
    trials = []
    for i, failures in enumerate(FAILURES):
        trial_dir = tmp_path / "trials" / f"t{i}"
        (trial_dir / "verifier").mkdir(parents=True)
        tests = [
            (n, "failed", failures[n]) if n in failures else (n, "passed", "")
            for n in ("test_prints_counts", "test_limit")
        ]
        (trial_dir / "verifier" / "ctrf.json").write_text(json.dumps(ctrf(tests)))
        trials.append(
            TrialResult(
                trial_id=f"t{i}",
                run_id="run-1",
                env_version="v1",
                agent="solver",
                model=SETUPS[i].model,
                outcome=Outcome.FAIL,
                reward=0.0,
                artifacts_dir=str(trial_dir),
            )
        )
    found = [f for f in version_findings(env, trials) if f.rule == RULE]
    assert bool(found) is fires
    if fires:
        assert sorted(found[0].trial_ids) == ["t0", "t1", "t2"]
        assert any("tests/test_outputs.py:" in e for e in found[0].evidence)


@pytest.mark.parametrize(
    ("failures", "kind"),
    [
        (None, "underspecified"),  # no task model: the failures were not read, the static finding stands
        ([{"kind": "capability"}, {"kind": "capability"}], "hard"),  # every failure on a stated check
        ([{"kind": "capability"}, {"kind": "ambiguity"}], "underspecified"),
    ],
)
def test_a_static_omission_explains_a_no_pass_task_only_where_a_failure_hits_it(failures, kind):
    """instruction-omits-tested-requirement read from the files alone: a no-pass task is `underspecified` by it
    when a failure was on a check requiring the unstated term, or when the failures could not be read against the
    checks; where every failure is on a stated check, the omission does not explain them and the task is `hard`."""
    from envqa.core.models import Finding
    from envqa.probes.cross_trial.no_pass import no_pass_kind

    trials = {
        f"t{i}": _trial("AssertionError: wrong counts", trial_name=f"t{i}", agent=f"a{i}", model=f"m{i}")
        for i in range(2)
    }
    static = Finding.of("instruction-omits-tested-requirement", "the tests pass --limit, which the instruction omits")
    assert no_pass_kind(trials, trials, [static], failures)["kind"] == kind
