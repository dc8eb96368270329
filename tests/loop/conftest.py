"""Helpers for the loop's end-to-end tests: the real `qa` CLI, real Docker, the real store read back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from providers.conftest import fake_provider  # noqa: F401  (the fixture, shared with the provider tests)
from qa_testkit import EXAMPLES, QA, run_qa  # noqa: F401
from qa_testkit import store_rows as testkit_store_rows

FIXTURES = Path(__file__).parent / "fixtures"
collect_ignore_glob = ["fixtures/*"]  # task directories: their tests run inside the sandbox, not here
FAST = "[probes]\noracle_runs = 1\n[reviser]\ngate_oracle_runs = 1\n"


def store_rows(qa_env: dict, sql: str, args: tuple = ()) -> list[dict]:
    """The run's store (SQLite, or Postgres under QA_STORE_URL); [] while it is being written: poll again."""
    return testkit_store_rows(qa_env["QA_HOME"], sql, args)


def qa_json(args: list[str], env: dict, cwd: Path, code: int, timeout: float = 600) -> dict:
    """Run `qa ... --json`, assert its exit code, return the one JSON object it printed."""
    proc = run_qa([*args, "--json"], env, timeout=timeout, cwd=cwd)
    assert proc.returncode == code, f"qa {' '.join(args)}: exit {proc.returncode}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def popen_qa(args: list[str], env: dict, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([QA, *args], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def tree_digest(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def loop_cwd(tmp_path):
    """A working directory whose qa.toml keeps the loop's runs short (one oracle run in the hunt and gate)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "qa.toml").write_text(FAST)
    return cwd
