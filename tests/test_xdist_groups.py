"""tests/xdist_groups.py: under `--dist loadgroup` a group's tests run on one worker and free tests spread, which
xdist's own `xdist_group` marks no longer do under pytest 9 (pytest-dev/pytest-xdist#1386)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from xdist_groups import xdist_group_of

pytestmark = pytest.mark.fast
TESTS = Path(__file__).resolve().parent


def test_the_groups_are_modules_shared_dirs_and_free_tests_alone():
    assert xdist_group_of("tests/loop/test_approval_cli.py::test_reject[x]") == "tests/loop/test_approval_cli.py"
    assert xdist_group_of("tests/report/test_html_report.py::test_a") == "tests/report/"
    assert xdist_group_of("tests/probes/test_detection.py::test_example_detection[clean-wordfreq]") is None


def _worker_per_test(tmp_path: Path, conftest: str) -> dict[str, str]:
    (tmp_path / "conftest.py").write_text(textwrap.dedent(conftest))
    for name in ("grouped", "free"):
        tests = "".join(f"def test_{i}(record):\n    record('{name}::test_{i}')\n\n\n" for i in range(4))
        (tmp_path / f"test_{name}.py").write_text(tests)
    out = tmp_path / "workers.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2", "--dist", "loadgroup"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(TESTS), "WORKERS_OUT": str(out), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return dict(line.split() for line in out.read_text().splitlines())


CONFTEST = """
    import os, pytest
    from xdist_groups import GroupScheduling

    @pytest.fixture
    def record():
        def write(name):
            with open(os.environ["WORKERS_OUT"], "a") as f:
                f.write(f"{name} {os.environ['PYTEST_XDIST_WORKER']}\\n")
        return write

    def pytest_xdist_make_scheduler(config, log):
        group = lambda nodeid: nodeid.split("::")[0] if nodeid.startswith("test_grouped.py") else None
        return GroupScheduling(config, log, group_of=group)
"""


def test_a_group_runs_on_one_worker_and_free_tests_may_spread(tmp_path):
    workers = _worker_per_test(tmp_path, CONFTEST)
    grouped = {w for name, w in workers.items() if name.startswith("grouped")}
    assert len(workers) == 8 and len(grouped) == 1, workers
