"""Syscall trace events as the shortcut rules read them, parsed from `strace -f -ttt` text.

Pure parsing, no processes: the host-side tracer (sandbox/strace.py's StraceSession) lives with the
backend and is reached through `Sandbox.start_trace`; probes read its events (and the saved traces of
earlier trials) through this module. Only what the rules need is kept: which binaries ran (execve),
opens under /tests, /solution and /logs/verifier, and connect() attempts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic import BaseModel, Field

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


def _unescape(s: str) -> str:
    try:
        return s.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        return s


def joined_calls(text: str) -> Iterator[tuple[int, float, str]]:
    """(pid, timestamp, call) for each whole call of `strace -f -ttt` output: an unfinished half is held back
    until its resumed half arrives on the same pid, and the two are joined."""
    pending: dict[str, str] = {}
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
        yield int(pid), ts, rest


def parse_strace(text: str) -> list[StraceEvent]:
    """Parse `strace -f -ttt` output (joining unfinished/resumed halves) into the events rules use."""
    events: list[StraceEvent] = []
    for pid, ts, rest in joined_calls(text):
        ev = _event(pid, ts, rest)
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
        return StraceEvent(
            ts=ts, pid=pid, kind="unlink" if name.startswith("unlink") else "rename", path=hits[-1], write=True, ok=ok
        )
    return None


# What a verifier did with each path, for the rules that ask which paths it listed, read, wrote or failed to
# run (issue 35: why the nop passes, a verifier that writes what it checks). Needs a trace of PATH_SYSCALLS.
PATH_SYSCALLS = "execve,execveat,open,openat,creat,chdir,mkdir,mkdirat,unlink,unlinkat,rename,renameat,renameat2"


class PathUse(BaseModel):
    """One path a traced process used: `use` is listed (a directory opened to read its entries), read, written,
    or executed; `ok` False with `error` (ENOENT, ...) when the call failed."""

    path: str
    use: str
    ok: bool = True
    error: str = ""
    line: str = ""


def path_uses(text: str, cwd: str = "/") -> list[PathUse]:
    """Every path use in `strace -f -ttt` text, in order; relative paths resolved against the last chdir (or
    `cwd`), which is exact for one process tree that changes directory once, a fair guess otherwise."""
    import posixpath

    uses: list[PathUse] = []
    where = cwd
    for _pid, _ts, rest in joined_calls(text):
        m = CALL_RE.match(rest)
        if not m or m.group("ret") == "?":
            continue
        strings = [_unescape(s) for s, _more in STR_RE.findall(m.group("args"))]
        if not strings:
            continue
        name, args, ok = m.group("name"), m.group("args"), int(m.group("ret")) >= 0
        path = posixpath.normpath(posixpath.join(where, strings[0]))
        if name == "chdir":
            where = path if ok else where
            continue
        if name.startswith("execve"):
            use = "executed"
        elif name.startswith(("mkdir", "unlink", "rename")) or name == "creat":
            use, path = "written", posixpath.normpath(posixpath.join(where, strings[-1]))
        elif "O_DIRECTORY" in args:
            use = "listed"
        else:
            use = "written" if any(flag in args for flag in WRITE_FLAGS) else "read"
        uses.append(PathUse(path=path, use=use, ok=ok, error=m.group("err") or "", line=rest.strip()[:300]))
    return uses
