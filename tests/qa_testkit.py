"""Helpers shared by every test package. A plain module, not a conftest: `from conftest import` would
resolve to whichever conftest.py was imported last under that name."""

from __future__ import annotations

import shutil
import signal
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


def interruptible() -> None:
    """`preexec_fn` for a `qa` a test will Ctrl-C: SIGINT at its default, as in a terminal. A shell that starts a
    job in the background (no job control) sets SIGINT to ignored, every child inherits that, and Python then
    never raises KeyboardInterrupt: the test would measure how it was launched, not what `qa` does."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_files(root: Path, files: dict[str, str]) -> Path:
    """A task directory from {relative path: text}; `.sh` files are made executable."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if rel.endswith(".sh"):
            p.chmod(0o755)
    return root


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


def sigkill_when(proc: subprocess.Popen, condition: Callable[[], object], timeout: float, what: str) -> None:
    """kill -9 `proc` (no cleanup code of its own runs) as soon as `condition` holds; it is reaped either way."""
    try:
        wait_for(condition, timeout, what)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def store_rows(home: str | Path, sql: str, args: tuple = ()) -> list[dict]:
    """Rows of the store a `qa` process with QA_HOME=`home` writes: its SQLite file, or the Postgres database
    QA_STORE_URL names (issue 16). [] while the store does not exist yet or is being written (callers poll)."""
    import sqlite3

    from envqa.store.postgres import PgConnection, store_url

    db = Path(home) / "envqa.db"
    url = store_url(db)
    if url is not None:
        import psycopg

        conn = PgConnection(url, retry_sec=5)
        try:
            return [dict(r) for r in conn.execute(sql, args).fetchall()]
        except psycopg.Error:  # tables not created yet
            return []
        finally:
            conn.close()
    if not db.exists():
        return []
    try:
        conn = sqlite3.connect(db, timeout=5)
        conn.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in conn.execute(sql, args)]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # created, schema not written yet, or busy
        return []


# Headless Chromium for the report tests (Debian's /usr/bin/chromium, never a downloaded browser); the
# `browser` and `page` fixtures are in tests/conftest.py: one browser per session (two sync Playwright
# sessions in one thread do not work: the second finds the first's event loop running).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def open_report(page, path: Path) -> None:
    """Open a report file and wait until its script says it has rendered."""
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("html[data-ready='1']", timeout=15000)
