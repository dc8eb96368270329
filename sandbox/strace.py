"""Host strace attached to a container's processes: the Docker backend's `start_trace` capability.

Every `docker exec` process is started by the container's containerd shim (the parent of the
container's PID 1), so tracing the shim with `-f` sees each command the agent and the verifier run,
with paths as the container sees them. The text it writes is parsed by core/strace.py (pure, shared
with the probes that read saved traces).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import structlog

# The parsing is pure and lives in the core (probes read saved traces); this module is the host-side tracer.
from envqa.core.defaults import STRACE_ATTACH_SEC
from envqa.core.strace import SYSCALLS, StraceEvent, parse_strace

log = structlog.get_logger(__name__)

STRACE = "/usr/bin/strace"


class StraceSession:
    """A running `strace -f -p <shim>`; `stop()` ends it and returns the parsed events."""

    def __init__(
        self, init_pid: int, out_path: Path, attach_timeout: float = STRACE_ATTACH_SEC, syscalls: str = SYSCALLS
    ):
        self.out_path = Path(out_path)
        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        self.target = _parent_pid(init_pid)
        self.proc = subprocess.Popen(
            [
                STRACE,
                "-f",
                "-qq",
                "-ttt",
                "-s",
                "512",
                "-e",
                f"trace={syscalls}",
                "-o",
                str(self.out_path),
                "-p",
                str(self.target),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self._wait_attached(attach_timeout)

    def _wait_attached(self, timeout: float) -> None:
        """Return once every thread of the target has a tracer, so no command slips by untraced."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"strace exited early ({self.proc.returncode}): {err.strip()}")
            if _all_threads_traced(self.target):
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"strace did not attach to pid {self.target} within {timeout:g}s")

    def stop(self) -> list[StraceEvent]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc.stderr:
            self.proc.stderr.close()
        text = self.out_path.read_text(errors="replace") if self.out_path.is_file() else ""
        return parse_strace(text)


def strace_available() -> bool:
    return os.access(STRACE, os.X_OK)


def _parent_pid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as fh:
        return int(fh.read().rsplit(")", 1)[1].split()[1])


def _all_threads_traced(pid: int) -> bool:
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:
            continue
        tracer = next((ln.split()[1] for ln in status.splitlines() if ln.startswith("TracerPid:")), "0")
        if tracer == "0":
            return False
    return True
