"""The narrow sandbox interface every backend implements (docker for real, fake in process for tests).

Shaped after inspect_ai's SandboxEnvironment: argv not shell strings, a timeout per exec, output
capped in one place (`OutputBuffer`), and a docstring that says what each call raises. Agents and
probes see only `Sandbox` and `SandboxBackend`, never a Docker object: what only some backends can
do (the paths changed since the image, cutting the network, a host syscall trace, an egress proxy's
log) is an optional capability here that raises NotImplementedError where a backend lacks it.
Which backend runs is config (`[sandbox] backend = "docker"`): backends register a factory by name
(`register_backend`) and the app asks `create_backend(config)`.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, Field

from envqa.core.defaults import SANDBOX_SETUP_EXEC_SEC
from envqa.core.errors import InfraError, InputError
from envqa.core.named import Named
from envqa.core.strace import SYSCALLS, StraceEvent

if TYPE_CHECKING:
    from envqa.core.config import QAConfig


class SandboxError(InfraError):
    """The backend failed (daemon gone, container died): an infrastructure failure, never a fail."""

    def __init__(self, message: str, error_class: str = "sandbox_error"):
        super().__init__(message, error_class)


class ImageBuildError(Exception):
    """The environment's image did not build: the environment's fault, reported as a finding."""

    def __init__(self, message: str, log_tail: str = "", timed_out: bool = False):
        self.log_tail, self.timed_out = log_tail, timed_out
        super().__init__(message)


class ExecResult(BaseModel):
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False
    output_bytes: int = 0
    output_limit_exceeded: bool = False
    disk_limit_exceeded: bool = False  # the container's writable layer passed its cap (sandbox/limits.py)
    duration_sec: float = 0.0

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class SandboxSpec(BaseModel):
    """What to start: image, limits and network for one trial's container."""

    image: str
    cpus: float = 1.0
    memory_mb: int = 2048
    pids_limit: int = 1024
    disk_limit_mb: int | None = None  # writable-layer cap ([environment] storage_mb), watched from the host
    network: str = "none"  # "none", "bridge", or the name of a (usually internal) docker network
    env: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    output_limit_bytes: int = 1024 * 1024
    # A runaway writer (`yes`) is killed once it has produced this much, instead of running to its timeout.
    kill_after_output_bytes: int = 256 * 1024 * 1024
    # Directories the container's init creates as it starts (the trial's /logs dirs): no round trip of
    # their own. (Not tmpfs: the engine's archive API cannot read tmpfs mounts, so downloads would miss them.)
    init_dirs: list[str] = Field(default_factory=list)


class PathChange(BaseModel):
    """One path the sandbox's file system changed since its image (`docker diff`, one entry)."""

    path: str
    kind: Literal["changed", "added", "deleted"]


class SyscallTrace(Protocol):
    """A host tracer attached to a sandbox's processes (`Sandbox.start_trace`)."""

    def stop(self) -> list[StraceEvent]:
        """Detach and return the kept events (core/strace.py), in order."""


class Sandbox(abc.ABC):
    """One running container-like world. Use as a context manager: `stop()` runs on every path out.

    `spec` is what it was started from (image, limits, network). The abstract methods every backend
    has; the capabilities below them raise NotImplementedError where a backend lacks them, so a
    caller decides what to do without it (skip a probe, keep a default) instead of asking for a type.
    """

    spec: SandboxSpec

    @property
    @abc.abstractmethod
    def id(self) -> str: ...

    @abc.abstractmethod
    def exec(
        self,
        cmd: list[str],
        *,
        timeout: float | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        input: bytes | None = None,
    ) -> ExecResult:
        """Run argv to completion or timeout.

        `cmd` is argv (no shell unless you run one); `cwd` defaults to the image's working directory;
        `env` adds to the spec's environment; `input` is the command's whole stdin (closed after it).
        A timeout kills the command's whole process tree and returns `timed_out=True` (it does not
        raise; `exit_code` is what the killed process reported, 137 on Docker, or None). Output beyond
        the spec's `output_limit_bytes` is dropped from the middle (`truncated=True`, `output_bytes`
        counts everything); past `kill_after_output_bytes` the command is killed (`output_limit_exceeded`).
        A command that does not exist is an exit code (126/127), not an exception.
        Raises SandboxError when the backend itself fails, or after `stop()`.
        """

    @abc.abstractmethod
    def upload(self, source: Path, target: str) -> None:
        """Copy a host file or directory to `target` (parents created, modes kept). Raises SandboxError."""

    @abc.abstractmethod
    def download(self, source: str, target: Path, max_bytes: int = 64 * 1024 * 1024) -> bool:
        """Copy a container path into host dir `target` (as `target/<basename>`); False when it does not
        exist. Stops after `max_bytes` (what fitted is kept). Raises SandboxError when the backend fails."""

    @abc.abstractmethod
    def read_file(self, path: str, max_bytes: int = 1024 * 1024) -> bytes:
        """Read one file (at most `max_bytes`). Raises FileNotFoundError, IsADirectoryError, or SandboxError."""

    @abc.abstractmethod
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace one file with `mode` (parents created). Raises SandboxError."""

    def exec_with_files(self, files: list[tuple[Path, str]], cmd: list[str], **kwargs) -> ExecResult:
        """Upload (host path, container path) pairs, then exec. Backends may fold both into one call."""
        for source, target in files:
            self.upload(source, target)
        return self.exec(cmd, **kwargs)

    def mkdirs(self, *paths: str, mode: int = 0o755) -> None:
        """Create directories (parents too). Backends may do this without running a process."""
        res = self.exec(["mkdir", "-p", *paths], timeout=SANDBOX_SETUP_EXEC_SEC)
        if res.exit_code != 0:
            raise SandboxError(f"cannot create {', '.join(paths)}: {res.stderr.strip()}")
        self.exec(["chmod", f"{mode:o}", *paths], timeout=SANDBOX_SETUP_EXEC_SEC)

    @abc.abstractmethod
    def stop(self) -> None:
        """Remove the container and everything it holds. Idempotent; never raises."""

    def sh(self, script: str, **kwargs) -> ExecResult:
        return self.exec(["bash", "-c", script], **kwargs)

    # Optional capabilities: NotImplementedError where the backend lacks one.

    def changed_paths(self) -> list[PathChange]:
        """What the file system changed since the image (added, changed, deleted; parents of a change
        count as changed). Raises NotImplementedError, or SandboxError when the backend fails."""
        raise NotImplementedError(f"{type(self).__name__} cannot list the paths changed since its image")

    def cut_network(self) -> None:
        """Disconnect from every network (no route out afterwards, loopback kept); a no-op on network
        none. Raises NotImplementedError, or SandboxError when the backend fails."""
        raise NotImplementedError(f"{type(self).__name__} cannot cut its network")

    def restore_network(self) -> None:
        """Reconnect what `cut_network()` disconnected (a no-op when nothing was cut).
        Raises NotImplementedError, or SandboxError when the backend fails."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore its network")

    def offline(self) -> bool:
        """Whether nothing outside is reachable: network none, cut, or only internal networks.
        Raises NotImplementedError where the backend cannot tell."""
        raise NotImplementedError(f"{type(self).__name__} cannot tell whether it is offline")

    def host_pid(self) -> int:
        """The sandbox's PID 1 as the host sees it (what a host tracer attaches below).
        Raises NotImplementedError where there is no host process (an in-process fake, a remote engine)."""
        raise NotImplementedError(f"{type(self).__name__} has no host process")

    def start_trace(self, out_path: Path, syscalls: str = SYSCALLS) -> SyscallTrace:
        """Attach a host syscall tracer to every process the sandbox runs from now on, writing its raw
        text to `out_path`; returns once attached. Raises NotImplementedError where the backend (or the
        host: no strace) cannot trace, SandboxError when the tracer does not attach."""
        raise NotImplementedError(f"{type(self).__name__} cannot trace syscalls")

    def egress_log(self) -> list[str] | None:
        """The egress proxy's decisions so far (`ALLOWED`/`DENIED method host:port` lines), or None when
        no proxy stands in front of this sandbox. Raises NotImplementedError where the backend has none."""
        raise NotImplementedError(f"{type(self).__name__} has no egress proxy")

    def service(self, name: str) -> Sandbox:
        """A compose service beside this sandbox, to exec in (`[[verifier.collect]]` hooks); `main` is this one.
        Raises KeyError for a service the task does not run, NotImplementedError where the backend has none."""
        if name == "main":
            return self
        raise NotImplementedError(f"{type(self).__name__} runs no compose services")

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


BuildLog = Callable[[str], None]


class SandboxBackend(abc.ABC):
    """Builds images for environments and starts sandboxes from them."""

    @abc.abstractmethod
    def ensure_image(self, env, on_log: BuildLog | None = None) -> tuple[str, bool]:
        """Return (image ref, built_now). Builds only when no image exists for the content hash.

        Raises ImageBuildError when the environment does not build, SandboxError when the backend fails.
        """

    @abc.abstractmethod
    def start(self, spec: SandboxSpec) -> Sandbox:
        """Start a sandbox; raises SandboxError (error_class sandbox_start) when it cannot."""

    def cleanup(self, labels: dict[str, str] | None = None) -> int:
        """Remove leftovers carrying these labels; returns how many were removed."""
        return 0

    @property
    def connected(self) -> bool:
        """Whether this backend may have started anything (the runner's final cleanup skips one that never
        reached its engine: Docker overrides this; a backend with nothing to reach always may have)."""
        return True

    def check(self) -> None:  # noqa: B027 - a backend with nothing to reach keeps this no-op
        """Reach what the backend runs on, now (a run fails before it starts, not at its first trial).
        Raises SandboxError (error_class docker_unavailable on Docker); a backend with nothing to reach passes."""

    # Optional capabilities: NotImplementedError where the backend lacks one; `supports()` asks first.

    def with_egress_allowlist(
        self,
        allowed_hosts: list[str],
        *,
        image: str,
        upstream: str = "bridge",
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ) -> SandboxBackend:
        """A backend whose sandboxes that would get a network reach only `allowed_hosts`, through an egress
        proxy (from `image`) on the `upstream` network; `Sandbox.egress_log()` shows its decisions. A
        backend that already chose the network returns itself. Raises NotImplementedError."""
        raise NotImplementedError(f"{type(self).__name__} has no egress proxy")

    def fake_internet(
        self,
        serve_dir: Path | None,
        hosts: list[str],
        *,
        image: str,
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ) -> AbstractContextManager[str]:
        """`with backend.fake_internet(...) as network:` a fresh internal network on which `hosts` answer
        HTTP from `serve_dir` and nothing else is reachable; start sandboxes with `network=network`.
        Raises NotImplementedError, SandboxError (error_class sandbox_start) when it cannot start."""
        raise NotImplementedError(f"{type(self).__name__} has no fake internet")

    def with_sidecars(self, env) -> SandboxBackend:
        """A backend whose sandboxes start with `env`'s compose services beside them (environment/docker-compose.yaml),
        on a network of their own, and remove them when they stop; `Sandbox.service(name)` reaches one.
        Raises NotImplementedError; starting raises SandboxError (error_class sidecar_failed) when one fails."""
        raise NotImplementedError(f"{type(self).__name__} cannot start compose sidecars")

    def supports(self, capability: str) -> bool:
        """Whether this backend implements the optional capability named (a method of this class)."""
        mine = getattr(type(self), capability, None)
        return mine is not None and mine is not getattr(SandboxBackend, capability, None)


class BackendProxy(SandboxBackend):
    """A backend that passes the whole `SandboxBackend` protocol through to `inner`, so a wrapper (the egress
    allowlist, compose sidecars, a probe's fixed network) overrides only what it changes.

    A capability that returns another backend (`with_sidecars`, `with_egress_allowlist`) is asked of `inner` and
    wrapped again (`rewrap`), so the wrapper stays outermost. `withheld` names the optional capabilities this
    wrapper does not offer: they raise NotImplementedError and `supports()` says False. Anything else (a
    backend's own attribute, Docker's `client`) is read from `inner`.
    """

    withheld: frozenset[str] = frozenset()

    def __init__(self, inner: SandboxBackend):
        self.inner = inner

    def __getattr__(self, name: str):
        if name == "inner":  # not set yet (copy, pickle): no recursion through __getattr__
            raise AttributeError(name)
        return getattr(self.inner, name)

    def rewrap(self, inner: SandboxBackend) -> SandboxBackend:
        """This wrapper around another backend (what `inner.with_...` returned); same settings."""
        clone = copy.copy(self)
        clone.inner = inner
        return clone

    def _offered(self, capability: str) -> None:
        if capability in self.withheld:
            raise NotImplementedError(f"{type(self).__name__} does not offer {capability}")

    def ensure_image(self, env, on_log: BuildLog | None = None) -> tuple[str, bool]:
        return self.inner.ensure_image(env, on_log)

    def start(self, spec: SandboxSpec) -> Sandbox:
        return self.inner.start(spec)

    def cleanup(self, labels: dict[str, str] | None = None) -> int:
        return self.inner.cleanup(labels)

    @property
    def connected(self) -> bool:
        return self.inner.connected

    def check(self) -> None:
        self.inner.check()

    def with_egress_allowlist(
        self,
        allowed_hosts: list[str],
        *,
        image: str,
        upstream: str = "bridge",
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ) -> SandboxBackend:
        self._offered("with_egress_allowlist")
        inner = self.inner.with_egress_allowlist(
            allowed_hosts, image=image, upstream=upstream, label=label, labels=labels
        )
        return self.rewrap(inner)

    def fake_internet(
        self,
        serve_dir: Path | None,
        hosts: list[str],
        *,
        image: str,
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ) -> AbstractContextManager[str]:
        self._offered("fake_internet")
        return self.inner.fake_internet(serve_dir, hosts, image=image, label=label, labels=labels)

    def with_sidecars(self, env) -> SandboxBackend:
        self._offered("with_sidecars")
        return self.rewrap(self.inner.with_sidecars(env))

    def supports(self, capability: str) -> bool:
        """Withheld: no. Overridden by the wrapper itself: yes. Else whatever `inner` supports."""
        if capability in self.withheld:
            return False
        mine = getattr(type(self), capability, None)
        if mine is not None and mine is not getattr(BackendProxy, capability, None):
            return True
        return self.inner.supports(capability)


BackendFactory = Callable[["QAConfig"], SandboxBackend]
BACKENDS: Named[BackendFactory] = Named("sandbox backend")
# `@register_backend(name)`: a `factory(config) -> SandboxBackend` for `[sandbox] backend = name` (sandbox/ does)
register_backend = BACKENDS.register


def backend_names() -> list[str]:
    return BACKENDS.names()


def create_backend(config: QAConfig) -> SandboxBackend:
    """The backend `[sandbox] backend` names. Raises InputError for a name nobody registered."""
    name = config.sandbox.backend
    if name not in BACKENDS:
        raise InputError(
            "qa.toml", f"unknown sandbox backend {name!r} (known: {', '.join(backend_names())})", "sandbox.backend"
        )
    return BACKENDS.get(name)(config)


class OutputBuffer:
    """Keeps the head and tail of a stream up to `limit` bytes; counts everything it was given."""

    def __init__(self, limit: int):
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        half = self.limit // 2
        room = half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > self.limit - half:
                del self.tail[: len(self.tail) - (self.limit - half)]

    @property
    def truncated(self) -> bool:
        return self.total > len(self.head) + len(self.tail)

    def text(self) -> str:
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        return (
            bytes(self.head).decode("utf-8", errors="replace")
            + f"\n[... {dropped} bytes of output truncated ...]\n"
            + bytes(self.tail).decode("utf-8", errors="replace")
        )
