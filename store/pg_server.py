"""A private PostgreSQL server (initdb in a temp dir, unix socket only) for tests and benchmarks, the way
envqa.scheduler.embedded.RedisServer runs a private redis-server. Not used in production: there the store
is whatever QA_STORE_URL points at.

Postgres refuses to run as root; when we are root the server runs as the `postgres` user (Debian's
package creates it) in a directory handed to that user.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from envqa.core.defaults import PG_COMMAND_SEC, PG_SERVER_START_SEC, PG_STOP_SEC, PROCESS_EXIT_WAIT_SEC
from envqa.core.errors import InfraError

PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def pg_binary(name: str) -> str:
    for d in PG_BIN_DIRS:
        if (d / name).is_file():
            return str(d / name)
    found = shutil.which(name)
    if found is None:
        raise InfraError(f"PostgreSQL's {name} is not installed (run `make setup`)", "postgres_unavailable")
    return found


class PostgresServer:
    def __init__(self, workdir: str | Path | None = None):
        self._own_dir = workdir is None
        self.dir = Path(workdir or tempfile.mkdtemp(prefix="envqa-pg-"))
        self.data = self.dir / "data"
        self.proc: subprocess.Popen | None = None
        self._user = pwd.getpwnam("postgres") if os.geteuid() == 0 else None

    def _demote(self):
        if self._user is not None:
            os.setgid(self._user.pw_gid)
            os.setuid(self._user.pw_uid)

    def _run(self, args: list[str]) -> None:
        out = subprocess.run(args, preexec_fn=self._demote, capture_output=True, text=True, timeout=PG_COMMAND_SEC)
        if out.returncode != 0:
            raise InfraError(f"{args[0]} failed: {out.stderr.strip()[-500:]}", "postgres_unavailable")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.dir}"

    def start(self, timeout: float = PG_SERVER_START_SEC) -> PostgresServer:
        self.dir.mkdir(parents=True, exist_ok=True)
        if self._user is not None:
            os.chown(self.dir, self._user.pw_uid, self._user.pw_gid)
        if not (self.data / "PG_VERSION").exists():
            self._run(
                [pg_binary("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"]
            )
        args = [
            pg_binary("postgres"),
            "-D",
            str(self.data),
            "-k",
            str(self.dir),
            "-c",
            "listen_addresses=",
            "-c",
            "fsync=off",
            "-c",
            "max_connections=200",
            "-c",
            "shared_buffers=32MB",
        ]
        log = open(self.dir / "postgres.log", "ab")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=self._demote, start_new_session=True
        )
        log.close()
        import psycopg

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise InfraError(f"postgres exited at start; see {self.dir / 'postgres.log'}", "postgres_unavailable")
            try:
                psycopg.connect(self.url(), connect_timeout=1).close()
                return self
            except psycopg.OperationalError:
                time.sleep(0.05)
        self.stop()
        raise InfraError(f"postgres did not answer within {timeout:g}s", "postgres_unavailable")

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database; with `template`, a copy of that one (nobody may be connected to it meanwhile)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def stop(self, fast: bool = True) -> None:
        if self.proc is not None and self.proc.poll() is None:
            import signal

            self.proc.send_signal(signal.SIGINT if fast else signal.SIGTERM)  # SIGINT: "fast" shutdown
            try:
                self.proc.wait(timeout=PG_STOP_SEC)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=PROCESS_EXIT_WAIT_SEC)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def cleanup(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
