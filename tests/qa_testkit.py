"""Helpers shared by every test package. A plain module, not a conftest: `from conftest import` would
resolve to whichever conftest.py was imported last under that name."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
QA = str(Path(sys.executable).with_name("qa"))


def run_qa(args: list[str], env: dict, timeout: float = 600, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run the real `qa` CLI as a subprocess (the venv's entry point)."""
    return subprocess.run([QA, *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)


def copy_example(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(EXAMPLES / name, target)
    return target


def wait_for(condition: Callable[[], object], timeout: float, what: str, every: float = 0.05):
    """Poll `condition` until it returns something truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
