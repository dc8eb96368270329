"""The conftest fixer reads test.sh with the shell parser (bashlex spans), not a line regex: copies with a
redirection or `|| true` after them, continued pytest calls and redirected pytest output are rewritten; a
look-alike that copies only data, or is already pinned, is left as written. Files only, no Docker."""

from __future__ import annotations

import subprocess

import pytest

from envqa.agents.fixers import mechanical_fix
from envqa.core.parsers.shell import parse_script
from tests.reviser.conftest import write_task
from tests.reviser.test_fixers import finding

pytestmark = pytest.mark.fast

# Written from a public task shape: Harbor's template (harbor/cli/template-task/pytest-tests/test.sh: `if pytest
# --ctrf ... /tests/test_outputs.py -rA; then echo 1 ...`) as adapters ship it when the tests are first copied
# next to the agent's code, silently (`2>/dev/null || true`).
PUBLIC = """#!/bin/bash
cp /tests/test_outputs.py /app/ 2>/dev/null || true
cd /app
if pytest --ctrf /logs/verifier/ctrf.json /app/test_outputs.py -rA; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""

# Our own wording: a glob copy after a mkdir on one line, a continued pytest call with its output redirected.
OURS = """#!/bin/bash
mkdir -p /logs/verifier
mkdir -p /app/checks && cp -r /tests/* /app/checks/ || echo "copy failed" >&2
python3 -m pytest \\
    -q -p no:cacheprovider /app/checks > /logs/verifier/pytest.txt 2>&1
status=$?
[ $status -eq 0 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt
"""

# The look-alike: pytest already runs from /tests on /tests; the only copy is a data file for the checks.
CLEAN = """#!/bin/bash
cp /tests/expected.json /tmp/expected.json 2>/dev/null || true
cd /tests && pytest --rootdir=/tests --confcutdir=/tests -c /dev/null -q /tests/test_outputs.py
echo $? > /logs/verifier/status
"""


def _fix(tmp_path, script: str):
    task = write_task(tmp_path / "t", tests__test_sh=script)
    fix = mechanical_fix(task, [finding("exploit-workspace-conftest")])
    out = (fix.fixed_dir / "tests" / "test.sh").read_text() if fix.fixed_dir else ""
    return fix, out


def _commands(text: str) -> list[list[str]]:
    return [c.words for c in parse_script(text) if c.reachable]


def _syntax_ok(text: str, tmp_path) -> None:
    path = tmp_path / "check.sh"
    path.write_text(text)
    done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_a_silenced_copy_is_removed_and_pytest_reads_the_tests_in_place(tmp_path):
    fix, out = _fix(tmp_path, PUBLIC)
    assert fix.addressed == ["exploit-workspace-conftest"], fix.declined
    assert "# envqa: tests run in place from /tests (was: cp /tests/test_outputs.py /app/ 2>/dev/null || true)" in out
    assert not any(w[0] == "cp" for w in _commands(out)), out
    assert (
        "if cd /tests && pytest --rootdir=/tests --confcutdir=/tests -c /dev/null --ctrf /logs/verifier/ctrf.json "
        "/tests/test_outputs.py -rA; then"
    ) in out
    _syntax_ok(out, tmp_path)


def test_a_glob_copy_after_mkdir_and_a_continued_redirected_pytest_call_are_rewritten(tmp_path):
    fix, out = _fix(tmp_path, OURS)
    assert fix.addressed == ["exploit-workspace-conftest"], fix.declined
    assert 'mkdir -p /app/checks && : || echo "copy failed" >&2' in out  # the mkdir stays, the copy goes
    pytest_calls = [w for w in _commands(out) if "pytest" in w]
    assert pytest_calls == [
        [
            "python3",
            "-m",
            "pytest",
            "--rootdir=/tests",
            "--confcutdir=/tests",
            "-c",
            "/dev/null",
            "-q",
            "-p",
            "no:cacheprovider",
            "/tests",
        ]
    ], out  # an option's value is no path
    assert "-q -p no:cacheprovider /tests > /logs/verifier/pytest.txt 2>&1\n" in out  # redirections as written
    _syntax_ok(out, tmp_path)


def test_a_data_copy_with_pinned_pytest_stays_as_written(tmp_path):
    fix, out = _fix(tmp_path, CLEAN)
    assert fix.addressed == [] and "already pinned" in fix.declined["exploit-workspace-conftest"], fix.declined
    assert out == CLEAN
    # and unpinned, the data copy is still kept (only test code is copied away from /tests)
    fix, out = _fix(tmp_path / "b", CLEAN.replace("--rootdir=/tests --confcutdir=/tests -c /dev/null ", ""))
    assert fix.addressed == ["exploit-workspace-conftest"], fix.declined
    assert "cp /tests/expected.json /tmp/expected.json 2>/dev/null || true\n" in out


def test_harbors_template_task_with_a_workspace_copy_is_rewritten(tmp_path):
    """Harbor's own template task (tests/fixtures/harbor-template-pytest, from the 0.26.0 wheel, with the
    test.sh we wrote: the template's pytest call after a silenced copy into /app)."""
    import shutil
    from pathlib import Path

    task = shutil.copytree(Path(__file__).parents[1] / "fixtures" / "harbor-template-pytest" / "task", tmp_path / "t")
    fix = mechanical_fix(task, [finding("exploit-workspace-conftest")])
    assert fix.addressed == ["exploit-workspace-conftest"], fix.declined
    out = (fix.fixed_dir / "tests" / "test.sh").read_text()
    assert [w for w in _commands(out) if "pytest" in w] == [
        [
            "python3",
            "-m",
            "pytest",
            "--rootdir=/tests",
            "--confcutdir=/tests",
            "-c",
            "/dev/null",
            "/tests/test_outputs.py",
            "-rA",
            "-p",
            "no:cacheprovider",
        ]
    ], out
    assert "if cd /tests && python3 -m pytest" in out
    assert not any(w[0] == "cp" for w in _commands(out)), out
    _syntax_ok(out, tmp_path)
