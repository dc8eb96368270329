"""Host strace attached to a container's processes, and its output as structured events.

Every `docker exec` process is started by the container's containerd shim (the parent of the
container's PID 1), so tracing the shim with `-f` sees each command the agent and the verifier run,
with paths as the container sees them. Only what the shortcut rules need is kept: which binaries ran
(execve), opens under /tests, /solution and /logs/verifier, and connect() attempts.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import structlog
from pydantic import BaseModel, Field

log = structlog.get_logger(__name__)

STRACE = "/usr/bin/strace"
WATCHED_PREFIXES = ("/tests", "/solution", "/logs/verifier")
SYSCALLS = "execve,execveat,open,openat,creat,unlink,unlinkat,rename,renameat,renameat2,connect"
# Cheaper set for the verifier phase: opens are most of a Python process's syscalls, and tracing each one
# triples the verifier's run time; which binaries ran and what they connected to is what matters there.
EXEC_SYSCALLS = "execve,execveat,connect"
# The container runtime's own steps (runc exec) are not the agent's doing.
RUNTIME_BINARIES = {"/usr/sbin/runc", "/usr/bin/runc", "/proc/self/exe", "/usr/bin/runc-init"}
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")

LINE_RE = re.compile(r"^(?P<pid>\d+)\s+(?P<ts>\d+\.\d+)\s+(?P<rest>.*)$")
CALL_RE = re.compile(r"^(?P<name>\w+)\((?P<args>.*)\)\s+=\s+(?P<ret>-?\d+|\?)(?:\s+(?P<err>\w+))?")
STR_RE = re.compile(r'"((?:[^"\\]|\\.)*)"(\.\.\.)?')
INET_RE = re.compile(r'sin6?_port=htons\((\d+)\).*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")')


class StraceEvent(BaseModel):
    """One kept syscall. `ts` is the host's epoch time, so phases can be told apart by their timings."""

    ts: float
    pid: int
    kind: str  # exec | open | unlink | rename | connect
    path: str = ""
    argv: list[str] = Field(default_factory=list)
    write: bool = False
    ok: bool = True
    address: str = ""


class StraceSession:
    """A running `strace -f -p <shim>`; `stop()` ends it and returns the parsed events."""

    def __init__(self, init_pid: int, out_path: Path, attach_timeout: float = 10.0, syscalls: str = SYSCALLS):
        self.out_path = Path(out_path)
        self.out_path.parent.mkdir(parents=True, exist_ok=True)
        self.target = _parent_pid(init_pid)
        self.proc = subprocess.Popen(
            [STRACE, "-f", "-qq", "-ttt", "-s", "512", "-e", f"trace={syscalls}", "-o", str(self.out_path),
             "-p", str(self.target)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
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


def _unescape(s: str) -> str:
    try:
        return s.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return s


def parse_strace(text: str) -> list[StraceEvent]:
    """Parse `strace -f -ttt` output (joining unfinished/resumed halves) into the events rules use."""
    pending: dict[str, str] = {}
    events: list[StraceEvent] = []
    for raw in text.splitlines():
        m = LINE_RE.match(raw)
        if not m:
            continue
        pid, ts, rest = m.group("pid"), float(m.group("ts")), m.group("rest")
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            continue
        resumed = re.match(r"^<\.\.\. \w+ resumed>(.*)$", rest)
        if resumed:
            rest = pending.pop(pid, "") + resumed.group(1)
        ev = _event(int(pid), ts, rest)
        if ev is not None:
            events.append(ev)
    return events


def _event(pid: int, ts: float, call: str) -> StraceEvent | None:
    m = CALL_RE.match(call)
    if not m:
        return None
    name, args, ret = m.group("name"), m.group("args"), m.group("ret")
    ok = ret != "?" and int(ret) >= 0
    strings = [_unescape(s) for s, _more in STR_RE.findall(args)]
    if name in ("execve", "execveat"):
        if not ok or not strings:
            return None
        path = strings[0]
        argv = strings[1:]
        if path in RUNTIME_BINARIES or (argv and argv[0] == "runc"):
            return None
        return StraceEvent(ts=ts, pid=pid, kind="exec", path=path, argv=argv)
    if name == "connect":
        inet = INET_RE.search(args)
        if not inet:
            return None
        host = inet.group(2) or inet.group(3) or ""
        return StraceEvent(ts=ts, pid=pid, kind="connect", address=f"{host}:{inet.group(1)}", ok=ok)
    if not strings:
        return None
    if name in ("open", "openat", "creat"):
        path = strings[0]
        if not path.startswith(WATCHED_PREFIXES):
            return None
        write = name == "creat" or any(flag in args for flag in WRITE_FLAGS)
        return StraceEvent(ts=ts, pid=pid, kind="open", path=path, write=write, ok=ok)
    if name in ("unlink", "unlinkat", "rename", "renameat", "renameat2"):
        hits = [s for s in strings if s.startswith(WATCHED_PREFIXES)]
        if not hits:
            return None
        return StraceEvent(ts=ts, pid=pid, kind="unlink" if name.startswith("unlink") else "rename",
                           path=hits[-1], write=True, ok=ok)
    return None
