"""The few commands the fake sandbox runs by itself, over its in-memory file system.

Enough for the ABC's own defaults (`mkdir`, `chmod`), the conformance suite (tests/sandbox) and small
scripted tests: `echo`, `cat`, `pwd`, `printenv`, `sleep`, `id -u`, `mkdir`, `rm`, `chmod`, `stat -c`,
`head -c`, `tee`, `yes`, `ls`, `test`, and `sh -c "exit N"`. Anything else is the test's to script
(sandbox/fake.py: `FakeBackend.on`); an unknown command exits 127 like a missing binary. Not a shell:
no pipes, globs or variables.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass
class ExecCall:
    """One exec as a handler sees it; `sandbox` gives the handler the fake's files."""

    sandbox: Any  # the FakeSandbox (sandbox/fake.py), whose `fs` handlers read and write
    cmd: list[str]
    cwd: str
    env: dict[str, str]
    user: str | None = None
    input: bytes | None = None
    timeout: float | None = None

    def path(self, p: str) -> str:
        """`p` resolved against the call's working directory."""
        return posixpath.normpath(posixpath.join(self.cwd, p))


@dataclass
class FakeOutput:
    """What a handler returns. `duration` is how long the command "takes": past the exec's timeout the
    call is timed out (nothing sleeps). `stdout` may be an endless iterable of chunks (`yes`)."""

    exit_code: int | None = 0
    stdout: bytes | str | Iterable[bytes] = b""
    stderr: bytes | str = b""
    duration: float = 0.0


def _fail(code: int, message: str) -> FakeOutput:
    return FakeOutput(exit_code=code, stderr=message.rstrip("\n") + "\n")


def _echo(call: ExecCall, args: list[str]) -> FakeOutput:
    newline = not (args and args[0] == "-n")
    return FakeOutput(stdout=" ".join(args[0 if newline else 1 :]) + ("\n" if newline else ""))


def _cat(call: ExecCall, args: list[str]) -> FakeOutput:
    if not args:
        return FakeOutput(stdout=call.input or b"")
    out = b""
    for name in args:
        try:
            out += call.sandbox.fs.read(call.path(name))
        except (FileNotFoundError, IsADirectoryError) as e:
            return FakeOutput(exit_code=1, stdout=out, stderr=f"cat: {name}: {type(e).__name__}\n")
    return FakeOutput(stdout=out)


def _printenv(call: ExecCall, args: list[str]) -> FakeOutput:
    if not args:
        return FakeOutput(stdout="".join(f"{k}={v}\n" for k, v in sorted(call.env.items())))
    if args[0] not in call.env:
        return FakeOutput(exit_code=1)
    return FakeOutput(stdout=call.env[args[0]] + "\n")


def _id(call: ExecCall, args: list[str]) -> FakeOutput:
    if args != ["-u"]:
        return _fail(1, "id: the fake knows only `id -u`")
    uid = {None: 0, "": 0, "root": 0, "0": 0, "nobody": 65534}.get(call.user)
    return FakeOutput(stdout=f"{uid if uid is not None else 1000}\n")


def _mkdir(call: ExecCall, args: list[str]) -> FakeOutput:
    for name in [a for a in args if not a.startswith("-")]:
        call.sandbox.fs.mkdirs(call.path(name))
    return FakeOutput()


def _rm(call: ExecCall, args: list[str]) -> FakeOutput:
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    for name in [a for a in args if not a.startswith("-")]:
        if not call.sandbox.fs.remove(call.path(name), recursive="r" in flags) and "f" not in flags:
            return _fail(1, f"rm: cannot remove '{name}': No such file or directory (or a directory without -r)")
    return FakeOutput()


def _chmod(call: ExecCall, args: list[str]) -> FakeOutput:
    mode, *names = args
    for name in names:
        if not call.sandbox.fs.chmod(call.path(name), int(mode, 8)):
            return _fail(1, f"chmod: cannot access '{name}': No such file or directory")
    return FakeOutput()


def _stat(call: ExecCall, args: list[str]) -> FakeOutput:
    if len(args) < 3 or args[0] != "-c":
        return _fail(1, "stat: the fake knows only `stat -c FORMAT PATH...`")
    lines = []
    for name in args[2:]:
        node = call.sandbox.fs.node(call.path(name))
        if node is None:
            return _fail(1, f"stat: cannot statx '{name}': No such file or directory")
        fields = {"%a": f"{node.mode & 0o7777:o}", "%s": str(len(node.data or b"")), "%U": "root", "%n": name}
        lines.append(re.sub(r"%[asUn]", lambda m, fields=fields: fields[m.group()], args[1]))
    return FakeOutput(stdout="".join(line + "\n" for line in lines))


def _head(call: ExecCall, args: list[str]) -> FakeOutput:
    if len(args) != 3 or args[0] != "-c":
        return _fail(1, "head: the fake knows only `head -c N PATH`")
    n, name = int(args[1]), args[2]
    if name in ("/dev/zero", "/dev/urandom"):
        return FakeOutput(stdout=bytes(n) if name == "/dev/zero" else os.urandom(n))
    return FakeOutput(stdout=_cat(call, [name]).stdout[:n])


def _tee(call: ExecCall, args: list[str]) -> FakeOutput:
    data = call.input or b""
    for name in args:
        call.sandbox.fs.write(call.path(name), data, 0o644)
    return FakeOutput(stdout=data)


def _yes(call: ExecCall, args: list[str]) -> FakeOutput:
    chunk = ((" ".join(args) or "y") + "\n").encode() * 4096
    return FakeOutput(stdout=itertools.repeat(chunk))


def _ls(call: ExecCall, args: list[str]) -> FakeOutput:
    names = [a for a in args if not a.startswith("-")] or ["."]
    out = []
    for name in names:
        node = call.sandbox.fs.node(call.path(name))
        if node is None:
            return _fail(2, f"ls: cannot access '{name}': No such file or directory")
        out += [name] if node.data is not None else call.sandbox.fs.listdir(call.path(name))
    return FakeOutput(stdout="".join(n + "\n" for n in out))


def _test(call: ExecCall, args: list[str]) -> FakeOutput:
    if len(args) != 2 or args[0] not in ("-e", "-f", "-d"):
        return _fail(2, "test: the fake knows only -e/-f/-d PATH")
    node = call.sandbox.fs.node(call.path(args[1]))
    ok = node is not None and (args[0] == "-e" or (node.data is None) == (args[0] == "-d"))
    return FakeOutput(exit_code=0 if ok else 1)


def _shell(call: ExecCall, args: list[str]) -> FakeOutput | None:
    m = re.fullmatch(r"\s*exit\s+(\d+)\s*", args[1]) if len(args) >= 2 and args[0] == "-c" else None
    return FakeOutput(exit_code=int(m.group(1))) if m else None  # anything else: the test scripts it


BUILTINS: dict[str, Callable[[ExecCall, list[str]], FakeOutput | None]] = {
    "true": lambda call, args: FakeOutput(),
    "false": lambda call, args: FakeOutput(exit_code=1),
    "echo": _echo,
    "cat": _cat,
    "pwd": lambda call, args: FakeOutput(stdout=call.cwd + "\n"),
    "printenv": _printenv,
    "sleep": lambda call, args: FakeOutput(duration=float(args[0])),
    "id": _id,
    "mkdir": _mkdir,
    "rm": _rm,
    "chmod": _chmod,
    "stat": _stat,
    "head": _head,
    "tee": _tee,
    "yes": _yes,
    "ls": _ls,
    "test": _test,
    "sh": _shell,
    "bash": _shell,
}


def builtin(call: ExecCall) -> FakeOutput | None:
    """Run `call` as a built-in, or None when no built-in knows it."""
    fn = BUILTINS.get(posixpath.basename(call.cmd[0])) if call.cmd else None
    return fn(call, call.cmd[1:]) if fn else None
