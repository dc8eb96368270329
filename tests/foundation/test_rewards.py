"""Reward parsing: a verifier that says nothing usable is a verifier error, never reward 0."""

from __future__ import annotations

import pytest

from envqa.core.rewards import VerifierError, parse_pytest, parse_reward_files, parse_reward_json, parse_reward_txt

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1", 1.0),
        ("0", 0.0),
        ("0.5\n", 0.5),
        ("  1.0  \n\n", 1.0),
        ("1e0", 1.0),
        ("-0.25", -0.25),
    ],
)
def test_reward_txt_numbers(text, expected):
    assert parse_reward_txt(text) == expected


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        ("pass", "not a number"),
        ("1 0", "not a number"),
        ("nan", "not finite"),
        ("NaN", "not finite"),
        ("inf", "not finite"),
        ("-inf", "not finite"),
        ("true", "not a number"),
        ("0x1", "not a number"),
    ],
)
def test_reward_txt_garbage_is_a_verifier_error(text, needle):
    with pytest.raises(VerifierError, match=needle):
        parse_reward_txt(text)


def test_reward_json_reward_key_wins_over_mean():
    reward, rewards = parse_reward_json('{"reward": 0.0, "style": 1, "speed": 1}')
    assert reward == 0.0
    assert rewards == {"reward": 0.0, "style": 1.0, "speed": 1.0}


def test_reward_json_without_reward_key_is_the_mean():
    reward, rewards = parse_reward_json('{"a": 1, "b": 0, "c": 0.5}')
    assert reward == pytest.approx(0.5)
    assert rewards == {"a": 1.0, "b": 0.0, "c": 0.5}


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "empty"),
        ("  \n", "empty"),
        ("{", "not JSON"),
        ("1", "object"),
        ("[1, 0]", "object"),
        ('"1"', "object"),
        ("null", "object"),
        ("{}", "non-empty"),
        ('{"reward": {"inner": 1}}', "expected a number"),
        ('{"reward": [1]}', "expected a number"),
        ('{"reward": true}', "expected a number"),
        ('{"a": 1, "b": false}', "expected a number"),
        ('{"reward": "1"}', "expected a number"),
        ('{"reward": null}', "expected a number"),
        ('{"reward": NaN}', "not finite"),
        ('{"reward": Infinity}', "not finite"),
    ],
)
def test_reward_json_garbage_is_a_verifier_error(text, needle):
    with pytest.raises(VerifierError, match=needle):
        parse_reward_json(text)


def test_both_files_present_reward_txt_wins():
    assert parse_reward_files("1", '{"reward": 0}') == (1.0, {"reward": 1.0})


def test_both_files_present_and_txt_broken_is_an_error_not_a_fallback():
    with pytest.raises(VerifierError, match=r"reward\.txt"):
        parse_reward_files("", '{"reward": 1}')


def test_only_json_present():
    assert parse_reward_files(None, '{"reward": 1}') == (1.0, {"reward": 1.0})


def test_neither_file_present():
    with pytest.raises(VerifierError, match="wrote no reward"):
        parse_reward_files(None, None)


PYTEST_ALL_PASS = """
============================= test session starts ==============================
collected 2 items

test_outputs.py ..                                                       [100%]

==================================== PASSES ====================================
=========================== short test summary info ============================
PASSED test_outputs.py::test_file_exists
PASSED test_outputs.py::test_values
============================== 2 passed in 0.02s ===============================
"""

PYTEST_ONE_FAIL = PYTEST_ALL_PASS.replace(
    "PASSED test_outputs.py::test_values", "FAILED test_outputs.py::test_values - assert 1 == 2"
)


def test_pytest_all_pass():
    reward, per_test = parse_pytest(PYTEST_ALL_PASS)
    assert reward == 1.0
    assert per_test == {"test_outputs.py::test_file_exists": 1.0, "test_outputs.py::test_values": 1.0}


def test_pytest_one_failure_fails_the_trial():
    reward, per_test = parse_pytest(PYTEST_ONE_FAIL)
    assert reward == 0.0
    assert per_test["test_outputs.py::test_values"] == 0.0


def test_pytest_error_counts_as_failure_and_skips_are_ignored():
    out = "SKIPPED [1] test_x.py:3: no\nPASSED test_x.py::test_a\nERROR test_x.py::test_b - fixture\n"
    reward, per_test = parse_pytest(out)
    assert reward == 0.0 and set(per_test) == {"test_x.py::test_a", "test_x.py::test_b"}


def test_pytest_counts_line_without_rA():
    assert parse_pytest("..F\n===== 2 passed, 1 failed in 0.10s =====")[0] == 0.0
    assert parse_pytest("...\n===== 3 passed in 0.10s =====")[0] == 1.0


@pytest.mark.parametrize(
    "out,needle",
    [
        ("", "no pytest results"),
        ("bash: pytest: command not found", "no pytest results"),
        ("========== no tests ran in 0.01s ==========", "ran no tests"),
        ("===== 2 skipped in 0.01s =====", "no pytest results"),
    ],
)
def test_pytest_without_results_is_a_verifier_error(out, needle):
    with pytest.raises(VerifierError, match=needle):
        parse_pytest(out)
