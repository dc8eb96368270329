"""The cross-trial rules (probes/cross_trial/probe.py) on trials built by hand, each flaw beside a clean look-alike that
must stay quiet: a hard task whose failures spread, a hard task whose core test fails alone with diverging
values, a fail-to-pass test, a pass that ran the tests but wrote nothing it read."""

from __future__ import annotations

import pytest

from envqa.core.imported import ImportedTrial, TestOutcome, TrajectoryStep
from envqa.core.models import Outcome
from envqa.probes.cross_trial.probe import TaskTrials, cross_trial_findings, per_test_table

pytestmark = pytest.mark.fast

TESTS = ("test_outputs.py::test_exists", "test_outputs.py::test_header", "test_outputs.py::test_total")


def trial(
    name: str,
    agent: str,
    model: str | None,
    outcome: str = "fail",
    failed: dict[str, str] | None = None,
    steps: list[TrajectoryStep] | None = None,
    tests=TESTS,
    infra: str | None = None,
) -> ImportedTrial:
    failed = failed or {}
    return ImportedTrial(
        source_format="harbor",
        path=f"/jobs/j1/{name}",
        trial_name=name,
        job_name="j1",
        task_name="csv-report",
        agent=agent,
        model=model,
        outcome=Outcome(outcome),
        infra_class=infra,
        steps=steps or [],
        tests=[
            TestOutcome(name=t, status="failed" if t in failed else "passed", message=failed.get(t, "")) for t in tests
        ]
        if infra is None
        else [],
    )


def task(*trials: ImportedTrial, instruction: str = "Write /app/report.csv with a header row and a total row."):
    return TaskTrials(task="csv-report", trials={t.trial_name: t for t in trials}, instruction=instruction)


def rules(t: TaskTrials) -> dict[str, str]:
    return {f.rule: f.severity.value for f in cross_trial_findings(t)}


TOTAL = TESTS[2]
AGENTS = [
    ("claude-code", "anthropic/claude-opus-4-1"),
    ("codex", "openai/gpt-5"),
    ("terminus-2", "google/gemini-2.5-pro"),
]


def test_a_test_failing_alone_with_converging_values_is_an_error_and_converging_answers_fire():
    trials = [
        trial(f"t{i}", a, m, failed={TOTAL: "AssertionError: assert '1,234.50' == '1234.50'"})
        for i, (a, m) in enumerate(AGENTS)
    ] + [trial("p1", *AGENTS[0], outcome="pass"), trial("p2", *AGENTS[1], outcome="pass")]
    found = cross_trial_findings(task(*trials))
    assert {f.rule: f.severity.value for f in found} == {
        "test-fails-alone": "error",
        "converging-wrong-answers": "error",
    }
    alone = next(f for f in found if f.rule == "test-fails-alone")
    assert alone.trial_ids == ["t0", "t1", "t2"] and TOTAL in alone.location
    assert any("'1,234.50' == '1234.50'" in e for e in alone.evidence)


def test_a_hard_core_test_failing_alone_with_diverging_values_is_only_a_warning():
    values = ["'17.0' == '1234.50'", "'0.0' == '1234.50'", "'-3' == '1234.50'"]
    trials = [trial(f"t{i}", a, m, failed={TOTAL: f"assert {v}"}) for i, ((a, m), v) in enumerate(zip(AGENTS, values))]
    assert rules(task(*trials)) == {"test-fails-alone": "warning"}


def test_a_literal_the_instruction_words_differently_makes_it_an_error():
    trials = [
        trial(f"t{i}", a, m, failed={TOTAL: f"assert {got} == 'grand_total'"})
        for i, ((a, m), got) in enumerate(zip(AGENTS, ["'Total'", "'SUM'", "'total:'"]))
    ]
    found = rules(task(*trials, instruction="End the file with a grandTotal row."))
    assert found == {"test-fails-alone": "error"}


def test_a_hard_task_whose_failures_spread_over_its_tests_is_quiet():
    spread = [
        {TESTS[0]: "assert False"},
        {TESTS[1]: "assert 'a' == 'b'"},
        {TOTAL: "assert '1' == '2'"},
        {TESTS[1]: "assert 'x' == 'b'", TOTAL: "assert '3' == '2'"},
        {TESTS[0]: "assert False", TOTAL: "x"},
    ]
    trials = [trial(f"t{i}", *AGENTS[i % 3], failed=f) for i, f in enumerate(spread)]
    trials += [trial("p1", *AGENTS[1], outcome="pass"), trial("p2", *AGENTS[2], outcome="pass")]
    assert rules(task(*trials)) == {}


def test_no_fails_alone_on_a_single_test_task_or_for_a_fail_to_pass_test():
    one = [
        trial(f"t{i}", a, m, failed={"test_it": "assert 1 == 2"}, tests=("test_it",)) for i, (a, m) in enumerate(AGENTS)
    ]
    assert "test-fails-alone" not in rules(task(*one))
    diverging = [trial(f"t{i}", a, m, failed={TOTAL: f"assert '{i}' == '9'"}) for i, (a, m) in enumerate(AGENTS)]
    nop = trial("nop", "nop", None, failed={TOTAL: "assert None == '9'"})
    assert rules(task(*diverging, nop)) == {}


def test_the_same_wrong_value_from_one_model_only_does_not_converge():
    trials = [
        trial(f"t{i}", "claude-code", "anthropic/claude-opus-4-1", failed={TOTAL: "assert '7' == '9'"})
        for i in range(3)
    ]
    assert rules(task(*trials)) == {}


def _steps(*triples: tuple[str, str]) -> list[TrajectoryStep]:
    return [TrajectoryStep(step_id=i + 1, commands=[c], observation=o) for i, (c, o) in enumerate(triples)]


def test_a_pass_that_copies_the_expected_value_out_of_the_test_output_is_a_shortcut():
    steps = _steps(
        ("ls /app", "data.csv"),
        ("cd /app && python -m pytest /tests -x", "E   AssertionError: assert 'x' == 'checksum-8f2a91c'"),
        ("echo 'checksum-8f2a91c' > /app/report.csv", ""),
    )
    found = cross_trial_findings(task(trial("p1", *AGENTS[0], outcome="pass", steps=steps), trial("f1", *AGENTS[1])))
    assert [(f.rule, f.trial_ids) for f in found] == [("copied-verifier-values", ["p1"])]
    assert "steps 3" in found[0].location and "checksum-8f2a91c" in found[0].message


def test_a_pass_that_ran_the_tests_and_fixed_its_program_is_quiet():
    steps = _steps(
        ("cat /app/data.csv", "id,amount\n1,1234.50"),
        (
            "python -m pytest /tests",
            "E   AssertionError: assert '1,234.50' == '1234.50'\n/tests/test_outputs.py:412: AssertionError",
        ),
        ("sed -i 's/{:,.2f}/{:.2f}/' /app/report.py && python /app/report.py --rows 412", ""),
        ("python -m pytest /tests", "3 passed in 0.41s"),
    )
    assert rules(task(trial("p1", *AGENTS[0], outcome="pass", steps=steps), trial("f1", *AGENTS[1]))) == {}


@pytest.mark.parametrize(
    "command",
    [
        "echo 1 > /logs/verifier/reward.txt",
        "sed -i 's/assert/pass #/' /tests/test_outputs.py",
        "cp /tmp/fake /usr/local/bin/pytest",
        '{"command": "create", "path": "/tests/conftest.py", "file_text": "x"}',
    ],
)
def test_a_pass_that_writes_the_verifiers_files_is_tampering(command):
    steps = _steps(("ls", "a"), (command, ""))
    found = cross_trial_findings(task(trial("p1", *AGENTS[0], outcome="pass", steps=steps)))
    assert [(f.rule, f.trial_ids) for f in found] == [("trajectory-tampers-verifier", ["p1"])]
    assert found[0].evidence[0].startswith("trial p1 step 2")


def test_reading_the_tests_without_writing_them_is_not_tampering():
    steps = _steps(
        ("cat /tests/test_outputs.py", "def test_total(): ..."),
        ("python /app/report.py > /app/out.csv", ""),
        ("cp /app/report.py /app/backup/report.py", ""),
    )
    assert rules(task(trial("p1", *AGENTS[0], outcome="pass", steps=steps))) == {}


def test_an_outlier_pass_is_info_and_a_shared_pass_is_not():
    trials = [
        trial("p1", *AGENTS[0], outcome="pass"),
        trial("f1", *AGENTS[1], failed={TESTS[0]: "assert False"}),
        trial("f2", *AGENTS[2], failed={TESTS[1]: "assert False"}),
    ]
    found = cross_trial_findings(task(*trials))
    assert [(f.rule, f.severity.value, f.trial_ids) for f in found] == [("outlier-pass", "info", ["p1"])]
    assert "/jobs/j1/p1" in found[0].evidence[0]
    trials.append(trial("p2", *AGENTS[1], outcome="pass"))
    assert rules(task(*trials)) == {}


def test_an_agent_that_never_ran_is_a_harness_problem_outside_the_pool():
    trials = [
        trial(f"n{i}", "gemini-cli", "google/gemini-2.5-pro", outcome="infra", infra="agent-never-ran")
        for i in range(3)
    ] + [trial("p1", *AGENTS[0], outcome="pass"), trial("p2", *AGENTS[1], outcome="pass")]
    found = cross_trial_findings(task(*trials))
    assert [(f.rule, f.label.value, f.trial_ids) for f in found] == [("agent-never-ran", "infra", ["n0", "n1", "n2"])]


def test_the_per_test_table_counts_failures_and_fails_alone_per_agent():
    trials = [trial("t0", *AGENTS[0], failed={TOTAL: "x"}), trial("t1", *AGENTS[0], failed={TOTAL: "x", TESTS[1]: "y"})]
    rows = {(r["test"], r["agent"]): r for r in per_test_table(task(*trials))}
    assert rows[(TOTAL, "claude-code/anthropic/claude-opus-4-1")] == {
        "test": TOTAL,
        "agent": "claude-code/anthropic/claude-opus-4-1",
        "trials": 2,
        "failures": 2,
        "fails_alone": 1,
    }


def test_the_same_failed_exit_status_or_boolean_is_not_a_converging_answer():
    crash = "AssertionError: assert 1 == 0\n +  where 1 = CompletedProcess(args=['./run'], returncode=1).returncode"
    trials = [
        trial(f"t{i}", a, m, failed={TESTS[0]: crash, TOTAL: "assert False == True"}) for i, (a, m) in enumerate(AGENTS)
    ]
    assert rules(task(*trials)) == {}
