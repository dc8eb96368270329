"""Terminal-Bench 1's result parsers (core/tb1_parsers.py): each on outputs in the shapes its TB parser reads,
passing and failing, and the registry against the reward sources the loader hands out."""

from __future__ import annotations

import pytest

from envqa.core.environment import RewardSource
from envqa.core.rewards import VerifierError
from envqa.core.tb1_parsers import TB1_PARSERS, output_parser

pytestmark = pytest.mark.fast

SWEBENCH = "+ python parser.py\nSWEBench results starts here\n{verdict}\nSWEBench results ends here\n$ "
SWEPERF = "running benchmarks...\nSWE-Perf results starts here\n  {verdict}  \nSWE-Perf results ends here\n"
MLEBENCH = "grading submission\nMLEBench results starts here\n{verdict}\nMLEBench results ends here\n"
PYTEST = (
    "============================= test session starts ==============================\n"
    "collected 2 items\n\ntest_a.py .{mark}\n"
    "=========================== short test summary info ============================\n"
    "PASSED test_a.py::test_one\n{status} test_a.py::test_two{why}\n"
    "========================= {counts} in 0.05s =========================\n"
)

CASES = [
    ("swebench", SWEBENCH.format(verdict="PASSED"), 1.0),
    ("swebench", SWEBENCH.format(verdict="FAILED"), 0.0),
    ("sweperf", SWEPERF.format(verdict="PASSED"), 1.0),
    ("sweperf", SWEPERF.format(verdict="FAILED"), 0.0),
    ("mlebench", MLEBENCH.format(verdict="ALL TESTS PASSED"), 1.0),
    ("mlebench", MLEBENCH.format(verdict="2 of 3 tests passed"), 0.0),
    ("mlebench", "ALL TESTS PASSED\n", 1.0),  # no markers: the whole output is the block (TB's split)
    ("mlebench", "the grader crashed\n", 0.0),
    ("swelancer", "Running e2e...\nSWE Lancer SUCCESS\n", 1.0),
    ("swelancer", "Running e2e...\nswe lancer failure: 1 assertion\n", 0.0),
    ("swelancer", "user_tool run completed\n", 1.0),  # no verdict line: the user tool's completion passes
    ("swelancer", "the tests never started\n", 0.0),
    ("pytest", PYTEST.format(mark=".", status="PASSED", why="", counts="2 passed"), 1.0),
    ("pytest", PYTEST.format(mark="F", status="FAILED", why=" - assert 1 == 2", counts="1 failed, 1 passed"), 0.0),
]


@pytest.mark.parametrize(("name", "output", "reward"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_parser_reads_the_verdict(name, output, reward):
    got, per_test = TB1_PARSERS[name](output)
    assert got == reward
    assert per_test and all(v in (0.0, 1.0) for v in per_test.values())


def test_a_block_that_only_contains_passed_fails():
    """TB compares the block whole: `PASSED` among other lines, or a lowercase `passed`, is not resolved."""
    assert TB1_PARSERS["swebench"](SWEBENCH.format(verdict="tests: PASSED"))[0] == 0.0
    assert TB1_PARSERS["swebench"](SWEBENCH.format(verdict="passed"))[0] == 0.0
    assert TB1_PARSERS["mlebench"](MLEBENCH.format(verdict="all tests passed"))[0] == 0.0


@pytest.mark.parametrize(
    ("name", "output"),
    [
        ("swebench", "fatal: could not read from remote repository\n"),
        ("swebench", "SWEBench results starts here\nPASSED\n"),  # the end marker never printed
        ("sweperf", "SWE-Perf results ends here\n"),
        ("pytest", "bash: pytest: command not found\n"),
    ],
)
def test_missing_markers_are_a_verifier_error_not_a_fail(name, output):
    """TB's parser raises there (a parse error, never resolved); qa calls it a verifier error (infra)."""
    with pytest.raises(VerifierError):
        TB1_PARSERS[name](output)


def test_every_parser_has_a_reward_source_and_back():
    """The loader makes RewardSource(parser_name); the verifier phase looks the source up again."""
    sources = {s.value for s in RewardSource} - {RewardSource.FILE.value}
    assert sources == set(TB1_PARSERS)
    for name in TB1_PARSERS:
        assert output_parser(RewardSource(name)) is TB1_PARSERS[name]
    assert output_parser(RewardSource.FILE) is None
