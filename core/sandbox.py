"""The narrow sandbox interface every backend implements (docker now; others later).

Shaped after inspect_ai's SandboxEnvironment: argv not shell strings, a timeout per exec, output
capped in one place (`OutputBuffer`), and a docstring that says what each call raises. Agents and
probes see only `Sandbox`; which backend runs is config (`[sandbox] backend = "docker"`).
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, Field

from envqa.core.errors import InfraError


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


class Sandbox(abc.ABC):
    """One running container-like world. Use as a context manager: `stop()` runs on every path out."""

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

        A timeout kills the command's whole process tree and returns `timed_out=True` (it does not
        raise). Output beyond the spec's limit is dropped from the middle (`truncated=True`).
        Raises SandboxError when the backend itself fails.
        """

    @abc.abstractmethod
    def upload(self, source: Path, target: str) -> None:
        """Copy a host file or directory to `target` (parents created). Raises SandboxError."""

    @abc.abstractmethod
    def download(self, source: str, target: Path, max_bytes: int = 64 * 1024 * 1024) -> bool:
        """Copy a container path into host dir `target`; False when it does not exist."""

    @abc.abstractmethod
    def read_file(self, path: str, max_bytes: int = 1024 * 1024) -> bytes:
        """Read one file. Raises FileNotFoundError, IsADirectoryError, or SandboxError."""

    @abc.abstractmethod
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace one file (parents created)."""

    def exec_with_files(self, files: list[tuple[Path, str]], cmd: list[str], **kwargs) -> ExecResult:
        """Upload (host path, container path) pairs, then exec. Backends may fold both into one call."""
        for source, target in files:
            self.upload(source, target)
        return self.exec(cmd, **kwargs)

    def mkdirs(self, *paths: str, mode: int = 0o755) -> None:
        """Create directories (parents too). Backends may do this without running a process."""
        res = self.exec(["mkdir", "-p", *paths], timeout=60)
        if res.exit_code != 0:
            raise SandboxError(f"cannot create {', '.join(paths)}: {res.stderr.strip()}")
        self.exec(["chmod", f"{mode:o}", *paths], timeout=60)

    @abc.abstractmethod
    def stop(self) -> None:
        """Remove the container and everything it holds. Idempotent; never raises."""

    def sh(self, script: str, **kwargs) -> ExecResult:
        return self.exec(["bash", "-c", script], **kwargs)

    def __enter__(self) -> "Sandbox":
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
