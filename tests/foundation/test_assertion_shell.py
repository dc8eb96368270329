"""The shell reader of the assertion model (core/task_model/assertion_shell.py): one tmp task per construct, its
records' fields asserted. Files only, milliseconds each."""

from __future__ import annotations

from pathlib import Path

import pytest

from envqa.core.environment import load_environment
from envqa.core.task_model import model_of
from envqa.core.task_model.assertions import Assertion

pytestmark = pytest.mark.fast

REWARD = "/logs/verifier/reward.txt"


def records(root: Path, test: str, **files: str) -> list[Assertion]:
    """The shell records of a task whose test.sh is `test` (plus any other test files)."""
    texts = {
        "task.toml": 'version = "1.0"\n',
        "instruction.md": "Write 42 to /app/out.txt.\n",
        "environment/Dockerfile": "FROM debian:bookworm\n",
        "solution/solve.sh": "#!/bin/bash\necho 42 > /app/out.txt\n",
        "tests/test.sh": "#!/bin/bash\n" + test,
        **files,
    }
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return model_of(load_environment(root, lint=True)).assertions.in_language("shell")


def one(root: Path, test: str, **files: str) -> Assertion:
    got = records(root, test, **files)
    assert len(got) == 1, got
    return got[0]


def test_file_test_is_existence_through_a_variable(tmp_path):
    a = one(tmp_path, 'OUT=/app/out.txt\n[ -f "$OUT" ] || exit 1\n')
    assert (a.observes.kind, a.observes.path, a.expected.kind, a.op) == (
        "existence",
        "/app/out.txt",
        "exists",
        "exists",
    )
    assert (a.file, a.line, a.negated) == ("tests/test.sh", 3, False)
    assert [(h.kind, h.line, h.name) for h in a.hops] == [("assert", 3, ""), ("constant", 2, "OUT")]


def test_non_empty_file_test(tmp_path):
    a = one(tmp_path, "test -s /app/out.txt && echo 1 > " + REWARD + "\n")
    assert (a.op, a.observes.path) == ("non-empty", "/app/out.txt")


def test_string_compare_with_cat_is_output_file_against_literal(tmp_path):
    a = one(tmp_path, f'if [ "$(cat /app/out.txt)" = "42" ]; then echo 1 > {REWARD}; else echo 0 > {REWARD}; fi\n')
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")
    assert (a.expected.kind, a.expected.value, a.op, a.negated) == ("literal", "42", "==", False)


def test_double_bracket_compare_of_a_program_s_stdout(tmp_path):
    a = one(tmp_path, f"[[ $(/app/calc --add 6 7) == 13 ]] && echo 1 > {REWARD}\n")
    assert (a.observes.kind, a.observes.command, a.observes.flags) == (
        "stdout",
        ["/app/calc", "--add", "6", "7"],
        ["--add"],
    )
    assert (a.expected.kind, a.expected.value) == ("literal", "13")


def test_not_equal_that_fails_the_run_is_a_negated_check(tmp_path):
    a = one(tmp_path, 'got=$(cat /app/out.txt)\n[ "$got" != "bad" ] || exit 1\n')
    assert (a.op, a.negated, a.expected.value, a.observes.path) == ("==", True, "bad", "/app/out.txt")
    assert [h.kind for h in a.hops] == ["assert", "constant"]


def test_numeric_threshold(tmp_path):
    a = one(tmp_path, "n=$(wc -l < /app/out.txt)\nif [ $n -lt 10 ]; then exit 1; fi\n")
    assert (a.expected.kind, a.expected.value, a.op) == ("threshold", "10", "<")
    assert a.negated  # the run fails when n < 10: the check is n >= 10
    assert (a.observes.kind, a.observes.path) == ("output_file", "/app/out.txt")


def test_status_of_the_previous_command(tmp_path):
    got = records(tmp_path, f"/app/prog input.txt\nif [ $? -eq 0 ]; then echo 1 > {REWARD}; fi\n")
    a = [r for r in got if r.line == 3][0]
    assert (a.observes.kind, a.observes.command, a.expected.value) == ("exit_code", ["/app/prog", "input.txt"], "0")


def test_grep_qx_is_a_line_pattern(tmp_path):
    a = one(tmp_path, f"grep -qx 'hello, world' /app/greeting.txt && echo 1 > {REWARD}\n")
    assert (a.expected.kind, a.expected.pattern_kind, a.expected.value) == ("pattern", "line", "hello, world")
    assert (a.observes.kind, a.observes.path, a.op) == ("output_file", "/app/greeting.txt", "matches")


def test_grep_q_regex_and_case_insensitive(tmp_path):
    a = one(tmp_path, "grep -qiE '^total: [0-9]+$' /app/report.txt || exit 1\n")
    assert (a.expected.pattern_kind, a.expected.case_sensitive) == ("regex", False)


def test_grep_f_over_piped_output_is_a_substring_of_stdout(tmp_path):
    a = one(tmp_path, "/app/prog --json | grep -qF 'Done' || exit 1\n")
    assert (a.observes.kind, a.observes.command) == ("stdout", ["/app/prog", "--json"])
    assert (a.expected.pattern_kind, a.expected.value, a.expected.case_sensitive) == ("substring", "Done", True)


def test_grep_count_and_negated_grep(tmp_path):
    got = records(tmp_path, "grep -c ok /app/log.txt\n! grep -q ERROR /app/log.txt || exit 1\n")
    count, neg = sorted(got, key=lambda a: a.line)
    assert count.op == "count"
    assert (neg.negated, neg.expected.value) == (True, "ERROR")


def test_grep_prefix_pattern(tmp_path):
    a = one(tmp_path, "grep -q '^OK' /app/out.txt || exit 1\n")
    assert (a.expected.pattern_kind, a.expected.value) == ("prefix", "OK")


def test_diff_against_a_reference_file_of_the_tests(tmp_path):
    a = one(tmp_path, "diff /tests/expected.txt /app/out.txt || exit 1\n", **{"tests/expected.txt": "42\n"})
    assert (a.op, a.observes.path, a.expected.kind, a.expected.path) == (
        "same-file",
        "/app/out.txt",
        "file",
        "/tests/expected.txt",
    )
    assert a.expected.origin == "tests"


def test_cmp_of_piped_output(tmp_path):
    a = one(tmp_path, "head -n 1 /app/out.txt | cmp -s - /tmp/expected.txt || exit 1\n")
    assert (a.observes.kind, a.observes.path, a.expected.path) == ("output_file", "/app/out.txt", "/tmp/expected.txt")
    assert a.observes.flags == ["-s"]


def test_jq_e_reads_keys_and_literal(tmp_path):
    a = one(tmp_path, "jq -e '.result.status == \"ok\"' /app/r.json > /dev/null || exit 1\n")
    assert (a.observes.kind, a.observes.path, a.observes.keys) == ("output_file", "/app/r.json", ["result", "status"])
    assert (a.expected.kind, a.expected.value, a.op) == ("literal", "ok", "==")


def test_sha256sum_c_gives_one_digest_record_per_listed_file(tmp_path):
    sums = "a" * 64 + "  /app/a.bin\n" + "b" * 64 + "  /app/b.bin\n"
    got = records(tmp_path, "sha256sum -c --status /tests/sums.sha256 || exit 1\n", **{"tests/sums.sha256": sums})
    assert [(a.observes.kind, a.observes.path, a.expected.value) for a in got] == [
        ("digest", "/app/a.bin", "a" * 64),
        ("digest", "/app/b.bin", "b" * 64),
    ]
    assert [(h.kind, h.file, h.line) for h in got[1].hops[1:]] == [("constant", "tests/sums.sha256", 2)]


def test_digest_compare_in_a_bracket(tmp_path):
    a = one(tmp_path, '[ "$(sha256sum /app/out.bin | cut -d" " -f1)" = "abc123" ] || exit 1\n')
    assert (a.observes.kind, a.observes.path, a.expected.value) == ("digest", "/app/out.bin", "abc123")


def test_if_not_cmd_then_exit_is_the_command_s_exit_code(tmp_path):
    a = one(tmp_path, "if ! /app/run --check; then\n  exit 1\nfi\n")
    assert (a.op, a.observes.kind, a.observes.command, a.negated) == (
        "status",
        "exit_code",
        ["/app/run", "--check"],
        False,
    )


def test_and_or_reward_decided_by_a_command(tmp_path):
    a = one(tmp_path, f"/app/solve.sh /app/in.txt && echo 1 > {REWARD} || echo 0 > {REWARD}\n")
    assert (a.observes.kind, a.observes.command, a.expected.value) == (
        "exit_code",
        ["/app/solve.sh", "/app/in.txt"],
        "0",
    )


def test_a_tests_script_run_is_a_call_hop_and_pytest_is_not_a_check(tmp_path):
    got = records(
        tmp_path,
        f"python3 -m pytest -q /tests/test_x.py && echo 1 > {REWARD}\npython3 /tests/check.py && echo 1 > {REWARD}\n",
        **{"tests/check.py": "import sys\nsys.exit(0)\n", "tests/test_x.py": "def test_a():\n    assert 1\n"},
    )
    assert len(got) == 1
    assert [(h.kind, h.file) for h in got[0].hops] == [("assert", "tests/test.sh"), ("call", "tests/check.py")]


def test_a_sourced_helper_s_checks_carry_the_call_hop(tmp_path):
    helper = "check_out() {\n  grep -qx 42 /app/out.txt || exit 1\n}\n"
    got = records(tmp_path, "source /tests/helpers.sh\ncheck_out\n", **{"tests/helpers.sh": helper})
    assert len(got) == 1
    a = got[0]
    assert (a.file, a.line, a.test) == ("tests/helpers.sh", 2, "tests/test.sh")
    assert [(h.kind, h.file, h.line) for h in a.hops] == [
        ("assert", "tests/helpers.sh", 2),
        ("call", "tests/test.sh", 2),
    ]


def test_a_condition_that_only_decides_setup_is_not_a_check(tmp_path):
    got = records(
        tmp_path, "if [ -f /tests/req.txt ]; then pip install -r /tests/req.txt; fi\ncommand -v jq || exit 1\n"
    )
    assert got == []


def test_regex_match_in_double_brackets(tmp_path):
    a = one(tmp_path, 'v=$(cat /app/version)\n[[ "$v" =~ ^[0-9]+\\.[0-9]+$ ]] || exit 1\n')
    assert (a.op, a.expected.kind, a.expected.pattern_kind, a.observes.path) == (
        "matches",
        "pattern",
        "regex",
        "/app/version",
    )
