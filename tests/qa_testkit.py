"""Helpers shared by every test package. A plain module, not a conftest: `from conftest import` would
resolve to whichever conftest.py was imported last under that name."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


def containers(client, *labels: str, stopped: bool = True) -> list:
    """The engine's containers carrying every label in `labels` ("key" or "key=value"), stopped ones included
    unless `stopped=False`. A container another test removes meanwhile is skipped: docker-py inspects each
    listed container, and one gone in between raised NotFound out of the list (CI's failure in test_images)."""
    filters = {"label": list(labels)} if labels else None
    return client.containers.list(all=stopped, ignore_removed=True, filters=filters)


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
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def open_report(page, path: Path) -> None:
    """Open a report file and wait until its script says it has rendered."""
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("html[data-ready='1']", timeout=15000)


# --- one `qa run --json` per example per session (issue 31) ------------------------------------------------------
# The detection table runs every example; other tests that only read an example's report under the same
# configuration take the same run instead of paying for another. Under pytest-xdist the workers share the cache
# directory (a file lock per example: the first worker runs it, the others wait for its result, with a deadline).
def detection_toml() -> str:
    """The detection table's configuration: the fake internet for egress reruns (what network-fetch's reference
    solution reaches for), oracle x 2 (one validation run + one hunt run), no revision (the loop has its own
    tests), and trials in-process (`[scheduler] mode = "local"`): an embedded Redis and two worker processes per
    example cost CPU the 2-core CI has none of (25 examples under `-n 2`: 318 s embedded, 279 s local), and the
    table measures detection, not the scheduler. tests/scheduler/test_probe_jobs.py holds that probes on rq workers
    find what they find in-process; the scheduler's tests and the `qa run` tests on the defaults (one of
    tests/foundation/test_examples.py's among them) run the embedded default."""
    return (
        '[scheduler]\nmode = "local"\n'
        f'[probes]\nfake_internet_dir = "{EXAMPLES / "network-fetch" / "qa-fake-internet"}"\n'
        'fake_internet_hosts = ["releases.example.test"]\n'
        "oracle_runs = 2\n"
        "[loop]\nmax_iterations = 0\n"
    )


RUN_TIMEOUT = 600.0


def example_report(name: str, cache: Path, timeout: float = RUN_TIMEOUT) -> dict:
    """`qa run examples/NAME --json -c <detection_toml> --oracle-runs 1`, once per cache directory:
    {"code", "report" (None when stdout was not JSON), "stderr" (its tail), "seconds" (the run's own)}."""
    cache.mkdir(parents=True, exist_ok=True)
    done = cache / f"{name}.json"
    with open(cache / f"{name}.lock", "w") as lock:
        _lock(lock, timeout + 60, f"the shared qa run of {name}")
        if done.exists():
            return json.loads(done.read_text())
        home = cache / name / "qa-home"
        (cache / name).mkdir(parents=True, exist_ok=True)
        config = cache / name / "qa.toml"
        config.write_text(detection_toml())
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env["QA_HOME"] = str(home)
        started = time.monotonic()
        res = run_qa(
            ["run", str(EXAMPLES / name), "--json", "-c", str(config), "--oracle-runs", "1"],
            env,
            timeout=timeout,
            cwd=cache / name,
        )
        try:
            report = json.loads(res.stdout)
        except json.JSONDecodeError:
            report = None
        result = {
            "code": res.returncode,
            "report": report,
            "stderr": res.stderr[-3000:],
            "seconds": round(time.monotonic() - started, 1),
            "home": str(home),
        }
        tmp = done.with_suffix(".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(done)  # atomic: a waiting worker reads the whole result or none
        return result


def _lock(fh, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g}s waiting for {what}") from None
            time.sleep(0.2)
