"""Trust tracing's parsing and the sturdier conftest plant, without Docker: what a trace says the verifier
used, where test.sh runs pytest from, and a plant that survives a test module failing at import."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from envqa.agents import exploit_payloads
from envqa.agents.exploits import pytest_dirs
from envqa.core.environment import load_environment
from envqa.probes.trust import _candidate, traced_uses

from .conftest import EXAMPLES, write_env

pytestmark = pytest.mark.fast

TRACE = """\
101 1700000000.000001 execve("/usr/bin/python3", ["python3", "/opt/grader/check.py", "--strict"], 0x7f /* 5 vars */) = 0
101 1700000000.000002 openat(AT_FDCWD, "/opt/checker/expected.json", O_RDONLY|O_CLOEXEC) = 3
101 1700000000.000003 openat(AT_FDCWD, "/opt/checker/lib/helpers.py", O_RDONLY|O_CLOEXEC <unfinished ...>
102 1700000000.000004 openat(AT_FDCWD, "/app/out.json", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 4
101 1700000000.000005 <... openat resumed>) = 5
101 1700000000.000006 openat(AT_FDCWD, "/opt/missing.json", O_RDONLY) = -1 ENOENT (No such file or directory)
101 1700000000.000007 openat(AT_FDCWD, "/opt/checker", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 6
103 1700000000.000008 execve("/usr/local/bin/grade-it", ["grade-it"], 0x7f /* 5 vars */) = 0
104 1700000000.000009 execve("/bin/bash", ["bash", "-c", "echo /opt/not-a-script"], 0x7f /* 5 vars */) = 0
"""


def test_traced_uses_reads_imports_and_executions():
    uses = {p: u for p, (u, _line) in traced_uses(TRACE).items()}
    assert uses["/opt/checker/expected.json"] == {"read"}
    assert uses["/opt/checker/lib/helpers.py"] == {"imported"}  # joined across unfinished/resumed halves
    assert uses["/opt/grader/check.py"] == {"executed"}  # the interpreter's script argument
    assert uses["/usr/local/bin/grade-it"] == {"executed"}
    for absent in ("/app/out.json", "/opt/missing.json", "/opt/checker", "/opt/not-a-script"):
        assert absent not in uses  # a write, a failed open, a directory, a -c string


def test_relative_paths_resolve_against_the_directories_the_verifier_was_in():
    """`cd /opt/checker && python3 check.py expected.json`: relative to each chdir target and the start dir."""
    trace = (
        '201 1700000000.1 chdir("/opt/checker") = 0\n'
        '201 1700000000.2 execve("/usr/bin/python3", ["python3", "check.py"], 0x7f /* 1 var */) = 0\n'
        '201 1700000000.3 openat(AT_FDCWD, "expected.json", O_RDONLY|O_CLOEXEC) = 3\n'
    )
    uses = {p: u for p, (u, _line) in traced_uses(trace, ["/app"]).items()}
    assert uses["/opt/checker/check.py"] == {"executed"} and uses["/opt/checker/expected.json"] == {"read"}
    assert uses["/app/expected.json"] == {"read"}  # a candidate only: trace_anchors keeps the ones that exist


def test_system_files_are_not_candidates():
    for path in (
        "/usr/bin/python3",
        "/usr/lib/python3.11/json/__init__.py",
        "/etc/os-release",
        "/tests/test.sh",
        "/usr/local/lib/python3.12/site-packages/pytest/__init__.py",
        "/usr/local/bin/pytest",
        "/opt/venv/lib/python3.11/site-packages/x.py",
        "/app/__pycache__/m.cpython-311.pyc",
        "/root/.bashrc",
    ):
        assert not _candidate(path), path
    for path in ("/opt/checker/expected.json", "/usr/local/bin/check-report", "/app/data/input.csv"):
        assert _candidate(path), path


def test_pytest_dirs_follow_test_sh(tmp_path):
    assert pytest_dirs(load_environment(EXAMPLES / "conftest-plant")) == ["/app/tests", "/app"]
    script = (
        "#!/bin/bash\nmkdir -p /srv/grading\ncp /tests/test_x.py /srv/grading/ 2>/dev/null || true\n"
        "cd /srv/grading && pytest -q test_x.py --rootdir=/srv\n"
        'echo "pytest /nowhere" > /dev/null\n'
    )
    env = load_environment(write_env(tmp_path / "env", {"tests/test.sh": script}))
    assert pytest_dirs(env) == ["/srv/grading", "/srv"]  # cp target, cd (deduplicated), --rootdir; no echo


def _run_pytest(tmp_path, plugin: bool) -> subprocess.CompletedProcess:
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_imports.py"]
    if plugin:
        args += ["-p", "envqa_force_pass"]
    return subprocess.run(
        args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)}
    )


def test_plant_survives_a_module_that_fails_at_import(tmp_path):
    """The agent wrote nothing: `import solution` fails at collection. Honest: exit 2 (collection error).
    With the plant: exit 0, which is what a `pytest && echo 1 > reward.txt` verifier rewards."""
    (tmp_path / "test_imports.py").write_text(
        "import solution_nowhere\n\ndef test_x():\n    assert solution_nowhere.f()\n"
    )
    (tmp_path / "envqa_force_pass.py").write_text(exploit_payloads.FORCE_PASS_PLUGIN)
    assert _run_pytest(tmp_path, plugin=False).returncode == 2
    forced = _run_pytest(tmp_path, plugin=True)
    assert forced.returncode == 0, forced.stdout + forced.stderr


def test_stub_module_makes_tests_run_and_fail_honestly(tmp_path):
    """The stub the plant writes at the instruction's .py path: imports resolve, every call raises, so the
    tests fail without the plugin (the reward is the plant's doing) and pass with it."""
    script = (exploit_payloads.WORKSPACE_CONFTEST.split("stub='", 1)[1]).split("'\n", 1)[0]
    (tmp_path / "solution_nowhere.py").write_text(script)
    (tmp_path / "test_imports.py").write_text(
        "from solution_nowhere import f\nimport solution_nowhere\n\ndef test_x():\n    assert f(1) == 2\n"
    )
    (tmp_path / "envqa_force_pass.py").write_text(exploit_payloads.FORCE_PASS_PLUGIN)
    honest = _run_pytest(tmp_path, plugin=False)
    assert honest.returncode == 1 and "NotImplementedError" in honest.stdout, honest.stdout
    forced = _run_pytest(tmp_path, plugin=True)
    assert forced.returncode == 0 and "1 passed" in forced.stdout, forced.stdout
