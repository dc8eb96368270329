"""An in-process sandbox backend: files in memory, scripted exec results, no Docker (`[sandbox] backend = "fake"`).

The fast test tier runs roles, probes and trials through it. It keeps the ABC's promises (held to them
by tests/sandbox/conformance.py, which runs against Docker too): argv in, exit code and output out;
stdin, cwd, env and user reach the handler; a command "taking" longer than the timeout returns
`timed_out=True` (handlers declare a duration, nothing sleeps, their side effects stay); output is
capped by the same OutputBuffer and spec limits as on Docker; files round-trip with their modes;
after `stop()` every call raises SandboxError. A command runs through the first handler whose pattern
matches (the test's, via `FakeBackend.on`), then the built-ins (sandbox/fake_commands.py), else it
exits 127 like a missing binary. "Building" reads the Dockerfile's FROM, WORKDIR, ENV and COPY/ADD of
plain paths; RUN lines are recorded, not run.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import shlex
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from envqa.core.config import DEFAULT_BASE_IMAGE
from envqa.core.environment import Environment, iter_files
from envqa.core.sandbox import (
    BuildLog,
    ExecResult,
    ImageBuildError,
    OutputBuffer,
    PathChange,
    Sandbox,
    SandboxBackend,
    SandboxError,
    SandboxSpec,
    register_backend,
)
from envqa.sandbox.fake_commands import ExecCall, FakeOutput, builtin

Handler = Callable[[ExecCall], FakeOutput | int | str | None]
Pattern = str | Callable[[list[str]], bool]  # a regex searched in shlex.join(argv), or a predicate
KILLED = 137  # what a SIGKILLed command reports on Docker (a timeout, a runaway writer)
BASE_DIRS = {
    "/": 0o755,
    "/tmp": 0o1777,
    "/var/tmp": 0o1777,
    "/root": 0o700,
    "/etc": 0o755,
    "/usr/bin": 0o755,
    "/home": 0o755,
    "/opt": 0o755,
    "/srv": 0o755,
}


@dataclass
class FakeNode:
    data: bytes | None  # None: a directory
    mode: int


class FakeFS:
    """Absolute paths to files and directories; parents are created as on Docker (0755, root)."""

    def __init__(self, nodes: dict[str, FakeNode] | None = None):
        self.nodes = {p: FakeNode(n.data, n.mode) for p, n in (nodes or {"/": FakeNode(None, 0o755)}).items()}

    @staticmethod
    def norm(path: str) -> str:
        return posixpath.normpath("/" + path.lstrip("/"))

    def node(self, path: str) -> FakeNode | None:
        return self.nodes.get(self.norm(path))

    def mkdirs(self, path: str, mode: int = 0o755) -> None:
        path, parts = self.norm(path), []
        while path not in self.nodes:
            parts.append(path)
            path = posixpath.dirname(path)
        if self.nodes[path].data is not None:
            raise SandboxError(f"cannot create {parts[-1] if parts else path}: {path} is a file")
        for p in reversed(parts):
            self.nodes[p] = FakeNode(None, mode)

    def write(self, path: str, data: bytes, mode: int) -> None:
        path = self.norm(path)
        if path == "/":
            raise SandboxError("cannot write onto / itself: name a file under it")
        if (self.nodes.get(path) or FakeNode(b"", 0)).data is None:
            raise SandboxError(f"cannot write {path}: it is a directory")
        self.mkdirs(posixpath.dirname(path))
        self.nodes[path] = FakeNode(bytes(data), mode)

    def read(self, path: str) -> bytes:
        node = self.node(path)
        if node is None:
            raise FileNotFoundError(path)
        if node.data is None:
            raise IsADirectoryError(path)
        return node.data

    def below(self, path: str) -> list[str]:
        """Every path under directory `path`, sorted."""
        prefix = self.norm(path).rstrip("/") + "/"
        return sorted(p for p in self.nodes if p.startswith(prefix))

    def listdir(self, path: str) -> list[str]:
        base = self.norm(path)
        return [posixpath.basename(p) for p in self.below(base) if posixpath.dirname(p) == base]

    def remove(self, path: str, recursive: bool = False) -> bool:
        path = self.norm(path)
        node = self.nodes.get(path)
        if node is None or path == "/" or (node.data is None and not recursive):
            return False
        for p in self.below(path) + [path]:
            del self.nodes[p]
        return True

    def chmod(self, path: str, mode: int) -> bool:
        node = self.node(path)
        if node is not None:
            node.mode = mode
        return node is not None

    def size(self) -> int:
        return sum(len(n.data) for n in self.nodes.values() if n.data is not None)


@dataclass
class FakeImage:
    """What a fake build produced: the file system a sandbox starts from, its env and working directory."""

    nodes: dict[str, FakeNode]
    workdir: str = "/"
    env: dict[str, str] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)  # RUN lines, recorded (a handler may assert on them)


def base_image() -> FakeImage:
    return FakeImage({p: FakeNode(None, m) for p, m in BASE_DIRS.items()})


def _matches(pattern: Pattern, cmd: list[str]) -> bool:
    return bool(re.search(pattern, shlex.join(cmd))) if isinstance(pattern, str) else bool(pattern(cmd))


class FakeSandbox(Sandbox):
    def __init__(self, spec: SandboxSpec, image: FakeImage, handlers: list[tuple[Pattern, Handler]]):
        self.spec, self.image, self.handlers = spec, image, handlers
        self.fs = FakeFS(image.nodes)
        self._id = f"fake-{uuid.uuid4().hex[:12]}"
        self._stopped = False
        self._cut = False
        self.calls: list[ExecCall] = []  # every exec, in order (tests assert on what ran)
        for d in spec.init_dirs:
            self.fs.mkdirs(d)

    @property
    def id(self) -> str:
        return self._id

    def _alive(self) -> None:
        if self._stopped:
            raise SandboxError(f"sandbox {self._id} is gone", "sandbox_gone")

    def exec(self, cmd, *, timeout=None, cwd=None, env=None, user=None, input=None) -> ExecResult:
        self._alive()
        call = ExecCall(
            self,
            list(cmd),
            cwd or self.image.workdir,
            {**self.image.env, **self.spec.env, **(env or {})},
            user,
            input,
            timeout,
        )
        self.calls.append(call)
        out = next((h(call) for p, h in self.handlers if _matches(p, call.cmd)), None)
        out = out if out is not None else builtin(call)
        if out is None:
            out = FakeOutput(exit_code=127, stderr=f"fake sandbox: no handler for {shlex.join(call.cmd)[:200]}\n")
        elif isinstance(out, int):
            out = FakeOutput(exit_code=out)
        elif isinstance(out, str):
            out = FakeOutput(stdout=out)
        return self._result(out, timeout)

    def _result(self, out: FakeOutput, timeout: float | None) -> ExecResult:
        limit = self.spec.output_limit_bytes
        stdout, stderr = OutputBuffer(limit), OutputBuffer(limit)
        over = False
        for buf, data in ((stdout, out.stdout), (stderr, out.stderr)):
            chunks: Iterable[bytes] = [data] if isinstance(data, (bytes, str)) else data
            for chunk in chunks:
                chunk = chunk.encode() if isinstance(chunk, str) else chunk
                buf.feed(chunk)  # whole chunks, like a pipe's writes: the last one may overshoot the limit
                if stdout.total + stderr.total > self.spec.kill_after_output_bytes:
                    over = True
                    break
            if over:
                break
        timed_out = not over and timeout is not None and out.duration > timeout
        return ExecResult(
            exit_code=KILLED if (timed_out or over) else out.exit_code,
            stdout=stdout.text(),
            stderr=stderr.text(),
            timed_out=timed_out,
            truncated=stdout.truncated or stderr.truncated,
            output_bytes=stdout.total + stderr.total,
            output_limit_exceeded=over,
            disk_limit_exceeded=bool(self.spec.disk_limit_mb)
            and self.fs.size() > (self.spec.disk_limit_mb or 0) * 2**20,
            duration_sec=min(out.duration, timeout) if timeout is not None else out.duration,
        )

    def upload(self, source: Path, target: str) -> None:
        self._alive()
        source = Path(source)
        if not source.exists():
            raise SandboxError(f"upload of {source} failed: no such host path")
        if source.is_file():
            self.fs.write(target, source.read_bytes(), source.stat().st_mode & 0o7777)
            return
        self.fs.mkdirs(target)
        for path in iter_files(source):
            self.fs.write(
                posixpath.join(target, path.relative_to(source).as_posix()),
                path.read_bytes(),
                path.stat().st_mode & 0o7777,
            )

    def download(self, source: str, target: Path, max_bytes: int = 64 * 1024 * 1024) -> bool:
        self._alive()
        top = self.fs.node(source)
        if top is None:
            return False
        target.mkdir(parents=True, exist_ok=True)
        root = FakeFS.norm(source)
        total = 0
        for path in [root] + (self.fs.below(root) if top.data is None else []):
            node = self.fs.nodes[path]
            local = target / posixpath.basename(root) / posixpath.relpath(path, root)
            if node.data is None:
                local.mkdir(parents=True, exist_ok=True)
                continue
            total += len(node.data)
            if total > max_bytes:
                break
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(node.data)
            local.chmod(node.mode & 0o755)  # what Docker's tar "data" filter keeps
        return True

    def read_file(self, path: str, max_bytes: int = 1024 * 1024) -> bytes:
        self._alive()
        return self.fs.read(path)[:max_bytes]

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self._alive()
        self.fs.write(path, data, mode)

    def mkdirs(self, *paths: str, mode: int = 0o755) -> None:
        self._alive()
        for p in paths:
            self.fs.mkdirs(p, mode)
            self.fs.chmod(p, mode)

    def stop(self) -> None:
        self._stopped = True

    # Optional capabilities (core/sandbox.py): no host process, so no trace; no egress proxy.

    def changed_paths(self) -> list[PathChange]:
        self._alive()
        before, now = self.image.nodes, self.fs.nodes
        out = {p: "added" for p in now if p not in before}
        out.update(
            {
                p: "changed"
                for p in now
                if p in before
                and (before[p].data, before[p].mode) != (now[p].data, now[p].mode)
                and now[p].data is not None
            }
        )
        out.update({p: "deleted" for p in before if p not in now})
        for p in list(out):  # as `docker diff`: the parents of a change changed too
            parent = posixpath.dirname(p)
            while parent != "/" and parent not in out:
                out[parent] = "changed"
                parent = posixpath.dirname(parent)
        return [PathChange(path=p, kind=k) for p, k in sorted(out.items())]

    def cut_network(self) -> None:
        self._alive()
        self._cut = self.spec.network != "none"

    def restore_network(self) -> None:
        self._alive()
        self._cut = False

    def offline(self) -> bool:
        return self.spec.network == "none" or self._cut


class FakeBackend(SandboxBackend):
    """Builds fake images from Dockerfiles and starts FakeSandboxes; `on(pattern)` scripts a command."""

    def __init__(self, handlers: list[tuple[Pattern, Handler]] | None = None, build_error: str | None = None):
        self.handlers = list(handlers or [])
        self.build_error = build_error  # every build fails with this message (ImageBuildError)
        self.images: dict[str, FakeImage] = {DEFAULT_BASE_IMAGE: base_image()}
        self.started: list[FakeSandbox] = []
        self.builds = 0

    def on(self, pattern: Pattern) -> Callable[[Handler], Handler]:
        """`@backend.on(r"/tests/test\\.sh")`: run this handler for every matching command, in every sandbox."""

        def deco(handler: Handler) -> Handler:
            self.handlers.append((pattern, handler))
            return handler

        return deco

    def ensure_image(self, env: Environment, on_log: BuildLog | None = None) -> tuple[str, bool]:
        digest = hashlib.sha256(env.dockerfile.read_bytes())
        for path in iter_files(env.build_context):
            digest.update(path.relative_to(env.build_context).as_posix().encode() + b"\0" + path.read_bytes())
        tag = f"envqa-fake:{digest.hexdigest()[:24]}"
        if tag in self.images:
            return tag, False
        lines = [ln.strip() for ln in env.dockerfile.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        for i, line in enumerate(lines, 1):
            if on_log:
                on_log(f"Step {i}/{len(lines)} : {line}")
        if self.build_error:
            raise ImageBuildError(
                f"image build failed: {self.build_error}",
                f"Step {len(lines)}/{len(lines)} : {lines[-1] if lines else ''}\n{self.build_error}",
            )
        self.images[tag] = self._build(lines, env.build_context)
        self.builds += 1
        return tag, True

    def _build(self, lines: list[str], context: Path) -> FakeImage:
        image = base_image()
        fs = FakeFS(image.nodes)
        for line in lines:
            word, _, rest = line.partition(" ")
            word, rest = word.upper(), rest.strip()
            if word == "FROM" and rest.split()[0] in self.images:
                known = self.images[rest.split()[0]]
                fs, image = FakeFS(known.nodes), FakeImage({}, known.workdir, dict(known.env))
            elif word == "WORKDIR":
                image.workdir = posixpath.join(image.workdir, rest)
                fs.mkdirs(image.workdir)
            elif word == "ENV" and "=" in rest:
                image.env.update(dict(kv.split("=", 1) for kv in shlex.split(rest) if "=" in kv))
            elif word in ("COPY", "ADD"):
                *sources, dest = [a for a in shlex.split(rest) if not a.startswith("--")]
                for src in sources:
                    self._copy(fs, context / src, posixpath.join(image.workdir, dest), len(sources) > 1)
            elif word == "RUN":
                image.runs.append(rest)
        image.nodes = fs.nodes
        return image

    @staticmethod
    def _copy(fs: FakeFS, src: Path, dest: str, into: bool) -> None:
        if src.is_file():
            dest = posixpath.join(dest, src.name) if into or dest.endswith("/") else dest
            fs.write(dest, src.read_bytes(), src.stat().st_mode & 0o7777)
            return
        for path in iter_files(src):
            fs.write(
                posixpath.join(dest, path.relative_to(src).as_posix()), path.read_bytes(), path.stat().st_mode & 0o7777
            )

    def start(self, spec: SandboxSpec) -> FakeSandbox:
        image = self.images.get(spec.image)
        if image is None:
            raise SandboxError(f"image {spec.image} not found; build it first", "sandbox_start")
        sandbox = FakeSandbox(spec, image, self.handlers)
        self.started.append(sandbox)
        return sandbox

    def cleanup(self, labels: dict[str, str] | None = None) -> int:
        live = [
            s
            for s in self.started
            if not s._stopped and all(s.spec.labels.get(k) == v for k, v in (labels or {}).items())
        ]
        for s in live:
            s.stop()
        return len(live)


@register_backend("fake")
def backend_from_config(config) -> FakeBackend:
    """`[sandbox] backend = "fake"`: nothing scripted, only the built-in commands (tests script more)."""
    return FakeBackend()
