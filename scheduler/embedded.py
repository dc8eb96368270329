"""Processes the scheduler starts itself: a private redis-server on a unix socket, and local workers.

Used by embedded mode (`qa run` with no REDIS_URL), by the tests and by the benchmarks. Every process is
started in its own session (a terminal's Ctrl-C reaches `qa` only, which then stops them in order) and is
ended by its pid: workers first (SIGTERM: each puts its job back and removes its sandbox), then Redis.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from redis import Redis

from envqa.core.defaults import POOL_STOP_GRACE_SEC, PROCESS_EXIT_WAIT_SEC, REDIS_PING_CONNECT_SEC, REDIS_START_SEC
from envqa.core.errors import InfraError

SETTINGS_ENV = "QA_SCHEDULER_SETTINGS"
PARENT_ENV = "QA_WORKER_PARENT_PID"  # set for the workers a pool starts (envqa.scheduler.worker watches it)
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Runs in the child before exec: the kernel sends SIGTERM when the process that started it dies, so a
    `qa run` killed with -9 (or by a test's timeout) leaves no redis-server or worker behind (Linux)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the orderly shutdown paths still apply
        pass


def _stop(proc: subprocess.Popen, grace: float) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=PROCESS_EXIT_WAIT_SEC)


def log_tail(path: Path, lines: int = 20, max_bytes: int = 64_000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - max_bytes))
            text = f.read().decode(errors="replace")
    except OSError as e:
        return f"(cannot read {path}: {e})"
    return "\n".join(text.splitlines()[-lines:])


class RedisServer:
    """redis-server on a unix socket (or a TCP port) in a temp dir, no persistence unless `appendonly`."""

    def __init__(self, workdir: str | Path | None = None, port: int = 0, appendonly: bool = False):
        self._own_dir = workdir is None
        self.dir = Path(workdir or tempfile.mkdtemp(prefix="envqa-redis-"))
        self.port, self.appendonly = port, appendonly
        self.socket = self.dir / "redis.sock"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0" if self.port else f"unix://{self.socket}?db=0"

    def start(self, timeout: float = REDIS_START_SEC) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            raise InfraError("redis-server is not installed (run `make setup`), or set REDIS_URL", "redis_unavailable")
        self.dir.mkdir(parents=True, exist_ok=True)
        args = [
            binary,
            "--port",
            str(self.port),
            "--dir",
            str(self.dir),
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--loglevel",
            "warning",
            "--logfile",
            str(self.dir / "redis.log"),
        ]
        if not self.port:
            args += ["--unixsocket", str(self.socket), "--unixsocketperm", "700"]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise InfraError(f"redis-server exited at start; see {self.dir / 'redis.log'}", "redis_unavailable")
            try:
                Redis.from_url(self.url, socket_connect_timeout=REDIS_PING_CONNECT_SEC).ping()
                return self
            except Exception:  # noqa: BLE001 - not listening yet
                time.sleep(0.01)
        self.stop()
        raise InfraError(f"redis-server did not answer within {timeout:g}s", "redis_unavailable")

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc, 5.0)
            self.proc = None

    def cleanup(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


class WorkerPool:
    """`qa worker` processes on this host."""

    def __init__(
        self,
        url: str,
        count: int,
        queues: str = "*",
        config_path: str | None = None,
        env: dict | None = None,
        log_dir: Path | None = None,
        settings_json: str | None = None,
    ):
        self.url, self.count, self.queues, self.config_path = url, count, queues, config_path
        self.env = {**os.environ, **(env or {})}
        if settings_json:  # lease TTL, poll interval, defaults: what `qa worker` would read from qa.toml
            self.env[SETTINGS_ENV] = settings_json
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen] = []

    def spawn(self) -> subprocess.Popen:
        args = [sys.executable, "-m", "envqa.app.cli", "worker", "--url", self.url, "--queues", self.queues]
        if self.config_path:
            args += ["--config", self.config_path]
        out = subprocess.DEVNULL
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            out = open(self.log_dir / f"worker-{len(self.procs)}.log", "ab")
        env = {**self.env, PARENT_ENV: str(os.getpid())}  # the worker also watches for this process's death
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        if out is not subprocess.DEVNULL:
            out.close()
        self.procs.append(proc)
        return proc

    def start(self) -> WorkerPool:
        for _ in range(self.count):
            self.spawn()
        return self

    def alive(self) -> list[subprocess.Popen]:
        return [p for p in self.procs if p.poll() is None]

    def check(self) -> None:
        """The embedded run's watchdog: a worker only exits on its own when it cannot work (its loop kept
        failing, or it crashed), so any exit ends the run (exit 3) with the end of that worker's log."""
        for i, p in enumerate(self.procs):
            code = p.poll()
            if code is None:
                continue
            path = self.log_dir / f"worker-{i}.log" if self.log_dir is not None else None
            tail = log_tail(path) if path is not None else "(no log: started without a log directory)"
            raise InfraError(
                f"embedded worker {i} (pid {p.pid}) exited with code {code}; last lines of its log {path}:\n{tail}",
                "workers_down",
            )

    def stop(self, grace: float = POOL_STOP_GRACE_SEC) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=PROCESS_EXIT_WAIT_SEC)
