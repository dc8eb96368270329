"""DockerSandbox: one container, every command a `docker exec` with a deadline and capped output.

A timeout or a runaway writer kills the command's whole process tree (host pids, we are root on the
engine's host); uploads ride in the same exec as the command (`tar -x` from stdin) to save round trips.
"""

from __future__ import annotations

import io
import os
import posixpath
import shlex
import tarfile
import time
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
import structlog

from envqa.core.defaults import DOCKER_API_TIMEOUT_SEC
from envqa.core.sandbox import ExecResult, PathChange, Sandbox, SandboxError, SandboxSpec, SyscallTrace
from envqa.core.strace import SYSCALLS
from envqa.sandbox import docker_adapter
from envqa.sandbox.exec_stream import ExecStream
from envqa.sandbox.images import tar_bytes, tar_dirs, tar_many, tar_path
from envqa.sandbox.limits import DiskWatch, clear_if_saturated, kill_tree
from envqa.sandbox.overlay_diff import overlay_changes
from envqa.sandbox.strace import StraceSession, strace_available

log = structlog.get_logger(__name__)
UNTAR_FAILED = "envqa: could not unpack uploads (no tar?)"
KILL_ALL_BUT_OWN = (
    'for d in /proc/[0-9]*; do p=${d#/proc/}; case "$p" in 1|$$) continue;; esac; '
    '[ "$(tr "\\0" " " < "$d/cmdline" 2>/dev/null)" = "sleep infinity " ] && continue; '
    'kill -9 "$p" 2>/dev/null; done'
)
DIFF_KINDS = {0: "changed", 1: "added", 2: "deleted"}  # `docker diff`'s Kind
# The engine's own init (docker_backend starts every container with init=True), bind-mounted over /sbin, which a
# merged-/usr image shows as /usr/sbin: the diff lists it as added, but no agent and no task wrote it. Left in, the
# mutation and variation probes spent a verifier run per trial deleting it.
ENGINE_FILES = frozenset({"/sbin/docker-init", "/usr/sbin/docker-init"})


def session_labels() -> dict[str, str]:
    """`QA_SESSION` (a CI job, a test session) tags every container so its owner can find exactly its own."""
    session = os.environ.get("QA_SESSION")
    return {"envqa.session": session} if session else {}


def docker_client(timeout: int = DOCKER_API_TIMEOUT_SEC) -> docker.DockerClient:
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except (docker.errors.DockerException, requests.exceptions.RequestException) as e:
        raise SandboxError(
            f"cannot reach the Docker engine ({e}); start dockerd or run `make setup`", "docker_unavailable"
        ) from None


class DockerSandbox(Sandbox):
    def __init__(self, client: docker.DockerClient, container, spec: SandboxSpec):
        self.client, self.container, self.spec = client, container, spec
        self._stopped = False
        self._host_pid: int | None = None  # PID 1 on the host; 0 when the engine is not on this host
        self._disk: DiskWatch | None = None
        self._layers = ("", "")  # overlay2's UpperDir and LowerDir, known once _guard has looked
        self._offline: bool | None = None  # known once asked (or cut): verifier reruns ask again
        self._cut: list[str] = []  # networks cut_network() disconnected
        self.egress_proxy = None  # set by AllowlistBackend (sandbox/network.py): its log is egress_log()
        self.egress_denied: list[str] = []  # what the proxy denied, kept when the sandbox stops
        self.kept_networks: set[str] = set()  # never cut: the compose sidecars' internal network (sandbox/sidecars.py)
        self.sidecars: dict[str, Sandbox] = {}  # compose service -> its container (set by SidecarBackend)

    @property
    def id(self) -> str:
        return self.container.id

    @property
    def init_pid(self) -> int:
        """Host pid of the container's PID 1 (strace attaches below it)."""
        self.container.reload()
        return int(self.container.attrs["State"]["Pid"])

    def _guard(self) -> int:
        """On first use: find PID 1 on the host and start the writable-layer watch (sandbox/limits.py).
        Returns the host pid (0: the engine is remote, host-side limits are off)."""
        if self._host_pid is None:
            try:
                self.container.reload()
            except docker.errors.NotFound:
                raise SandboxError(f"sandbox {self.container.short_id} is gone", "sandbox_gone") from None
            except docker.errors.APIError:
                return 0  # the engine is busy: host-side limits stay off for this call, tried again next one
            pid = int(self.container.attrs["State"].get("Pid") or 0)
            driver = self.container.attrs.get("GraphDriver") or {}
            layers = driver.get("Data") or {}
            upper = layers.get("UpperDir") or ""
            if driver.get("Name") == "overlay2":  # the one layout overlay_diff reads
                self._layers = (upper, layers.get("LowerDir") or "")
            self._host_pid = pid if pid and os.path.exists(f"/proc/{pid}") else 0
            if self._host_pid and self.spec.disk_limit_mb and os.path.isdir(upper):
                self._disk = DiskWatch(self.container.id, upper, pid, self.spec.disk_limit_mb * 2**20).start()
        return self._host_pid

    def _settle(self) -> None:
        """A container an agent left at its pids limit (fork bomb) is cleared before anything else runs."""
        if self._guard():
            clear_if_saturated(self.container.id, self._host_pid, self.spec.pids_limit)

    def exec(self, cmd, *, timeout=None, cwd=None, env=None, user=None, input=None) -> ExecResult:
        """Start the exec, read its output under the caps (sandbox/exec_stream.py) until it ends, the deadline
        passes or the container vanishes; kill its process tree when it overran; then read its exit code."""
        started = time.monotonic()
        self._settle()
        exec_id, conn = self._start_exec(cmd, cwd=cwd, env=env, user=user, stdin=input is not None)
        stream = ExecStream(conn, self.spec.output_limit_bytes, self.spec.kill_after_output_bytes)
        stream.start(input)
        ended = stream.wait(None if timeout is None else started + timeout, self._alive)
        if ended.timed_out or stream.over_limit.is_set():
            self._kill_exec(exec_id)
        stream.close()
        exit_code = self._exit_code(exec_id, ended.timed_out or stream.over_limit.is_set())
        if ended.vanished or (exit_code is None and not self._alive()):
            raise SandboxError(
                f"sandbox {self.container.short_id} disappeared during exec of {cmd[:3]}", "sandbox_gone"
            )
        self._settle()
        return ExecResult(
            exit_code=exit_code,
            stdout=stream.out.text(),
            stderr=stream.err.text(),
            timed_out=ended.timed_out,
            truncated=stream.out.truncated or stream.err.truncated,
            output_bytes=stream.output_bytes,
            output_limit_exceeded=stream.over_limit.is_set(),
            disk_limit_exceeded=self._disk is not None and self._disk.exceeded.is_set(),
            duration_sec=time.monotonic() - started,
        )

    def _start_exec(self, cmd, *, cwd, env, user, stdin: bool) -> tuple[str, docker_adapter.ExecConnection]:
        """Create and start the exec, taking over its connection (stdin open only when there is input)."""
        api = self.client.api
        try:
            exec_id = api.exec_create(
                self.container.id,
                cmd,
                stdout=True,
                stderr=True,
                stdin=stdin,
                workdir=cwd,
                environment=env or None,
                user=user or "",
            )["Id"]
            return exec_id, docker_adapter.start_exec(api, exec_id)
        except docker.errors.APIError as e:
            raise SandboxError(f"exec failed in {self.container.short_id}: {e.explanation or e}") from None

    def _inspect_exec(self, exec_id: str) -> dict | None:
        """None when the engine no longer knows the exec (its container is gone, or the engine's
        periodic clean-up of finished execs got there first)."""
        try:
            return self.client.api.exec_inspect(exec_id)
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as e:
            raise SandboxError(f"exec inspect failed in {self.container.short_id}: {e.explanation or e}") from None

    def _exit_code(self, exec_id: str, killed: bool) -> int | None:
        for _ in range(100):
            info = self._inspect_exec(exec_id)
            if info is None:
                return None
            if not info.get("Running"):
                return info.get("ExitCode")
            time.sleep(0.05)
        return None if killed else -1

    def _kill_exec(self, exec_id: str) -> None:
        pid = (self._inspect_exec(exec_id) or {}).get("Pid") or 0
        if pid > 0 and os.path.exists(f"/proc/{pid}"):
            kill_tree(pid)
            return
        # The engine is not on this host: fall back to killing every process inside but the container's own
        # (PID 1, the engine's docker-init, and its `sleep infinity`).
        try:
            self.client.api.exec_start(
                self.client.api.exec_create(self.container.id, ["sh", "-c", KILL_ALL_BUT_OWN])["Id"]
            )
        except docker.errors.APIError:
            pass  # the container is gone: nothing left to kill

    def _alive(self) -> bool:
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return False
        except docker.errors.APIError:
            return True
        return self.container.status == "running"

    def _put(self, data: bytes, what: str) -> None:
        """One put_archive at / whose entries carry full paths: the engine creates missing parents
        (0755, root), so no `mkdir -p` exec round trip is needed. Parents are never tar entries, so an
        existing /tmp or /var keeps its mode and owner."""
        try:
            self.container.put_archive("/", data)
        except docker.errors.APIError as e:
            raise SandboxError(f"upload to {what} failed: {e.explanation or e}") from None

    @staticmethod
    def _arcname(path: str) -> str:
        arc = posixpath.normpath("/" + path).lstrip("/")
        if not arc:
            raise SandboxError("cannot upload onto / itself: name a file or directory under it")
        return arc

    def upload(self, source: Path, target: str) -> None:
        self._put(tar_path(Path(source), self._arcname(target)), target)

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self._put(tar_bytes(self._arcname(path), data, mode), path)

    def exec_with_files(self, files: list[tuple[Path, str]], cmd: list[str], **kwargs) -> ExecResult:
        """One exec that unpacks the files from stdin (`tar -x`) and then runs `cmd`: a trial's uploads
        cost no round trip of their own. Images without sh or tar fall back to put_archive + exec."""
        if not files or kwargs.get("input") is not None:
            return super().exec_with_files(files, cmd, **kwargs)
        data = tar_many([(Path(src), self._arcname(dst)) for src, dst in files])
        script = f'tar -x -C / || {{ echo {shlex.quote(UNTAR_FAILED)} >&2; exit 212; }}; exec "$@"'
        res = self.exec(["sh", "-c", script, "sh", *cmd], input=data, **kwargs)
        no_shell = res.exit_code in (126, 127) and '"sh"' in res.stdout + res.stderr
        if (res.exit_code == 212 and UNTAR_FAILED in res.stderr) or no_shell:
            return super().exec_with_files(files, cmd, **kwargs)
        return res

    def mkdirs(self, *paths: str, mode: int = 0o755) -> None:
        self._put(tar_dirs([self._arcname(p) for p in paths], mode), ", ".join(paths))

    def _archive(self, path: str, max_bytes: int) -> io.BytesIO | None:
        try:
            stream, _stat = self.container.get_archive(path)
        except docker.errors.NotFound:
            if not self._alive():  # "no such path" and "no such container" are both a 404
                raise SandboxError(f"sandbox {self.container.short_id} disappeared", "sandbox_gone") from None
            return None
        except docker.errors.APIError as e:
            raise SandboxError(f"download of {path} failed: {e.explanation or e}") from None
        buf = io.BytesIO()
        for chunk in stream:
            buf.write(chunk)
            if buf.tell() > max_bytes + 64 * 1024:
                break
        buf.seek(0)
        return buf

    def download(self, source: str, target: Path, max_bytes: int = 64 * 1024 * 1024) -> bool:
        buf = self._archive(source, max_bytes)
        if buf is None:
            return False
        target.mkdir(parents=True, exist_ok=True)
        try:
            with tarfile.open(fileobj=buf, mode="r|") as tar:
                total = 0
                for member in tar:
                    total += member.size
                    if total > max_bytes:
                        break
                    tar.extract(member, target, filter="data")
        except (tarfile.TarError, OSError) as e:
            log.warning("download.partial", source=source, error=str(e))
        return True

    def read_file(self, path: str, max_bytes: int = 1024 * 1024) -> bytes:
        buf = self._archive(path, max_bytes)
        if buf is None:
            raise FileNotFoundError(path)
        with tarfile.open(fileobj=buf, mode="r|") as tar:
            member = tar.next()
            if member is None:
                raise FileNotFoundError(path)
            if member.isdir():
                raise IsADirectoryError(path)
            fh = tar.extractfile(member)
            return fh.read(max_bytes) if fh else b""

    # Optional capabilities (core/sandbox.py)

    def changed_paths(self) -> list[PathChange]:
        """`docker diff`, read from the overlay layers on this host when it can be (sandbox/overlay_diff.py:
        the engine's own answer cost 0.6 s and as much of its CPU per call)."""
        local = overlay_changes(*self._layers) if self._guard() else None
        if local is not None:
            return [PathChange(path=path, kind=DIFF_KINDS[kind]) for path, kind in local if path not in ENGINE_FILES]
        try:
            changes = self.container.diff() or []
        except docker.errors.APIError as e:
            raise SandboxError(f"diff of {self.container.short_id} failed: {e.explanation or e}") from None
        return [
            PathChange(path=c["Path"], kind=DIFF_KINDS.get(c.get("Kind"), "changed"))
            for c in changes
            if c["Path"] not in ENGINE_FILES
        ]

    def _networks(self) -> list[str]:
        self.container.reload()
        return list((self.container.attrs.get("NetworkSettings") or {}).get("Networks") or {})

    def cut_network(self) -> None:
        if self.spec.network == "none":
            return
        try:
            for name in self._networks():
                if name in self.kept_networks:
                    continue
                self.client.networks.get(name).disconnect(self.container, force=True)
                self._cut.append(name)
        except docker.errors.APIError as e:
            raise SandboxError(f"cannot cut the network of {self.container.short_id}: {e.explanation or e}") from None
        self._offline = True

    def restore_network(self) -> None:
        try:
            while self._cut:
                self.client.networks.get(self._cut[-1]).connect(self.container)
                self._cut.pop()
        except docker.errors.APIError as e:
            raise SandboxError(f"cannot reconnect {self.container.short_id}: {e.explanation or e}") from None
        self._offline = None

    def offline(self) -> bool:
        if self._offline is None:
            offline = self.spec.network == "none"
            if not offline:
                try:
                    names = self._networks()
                    offline = bool(names) and all(self.client.networks.get(n).attrs.get("Internal") for n in names)
                except Exception:  # noqa: BLE001 - the engine cannot say: keep the package managers' own retry settings
                    offline = False
            self._offline = offline
        return self._offline

    def service(self, name: str) -> Sandbox:
        return self if name == "main" else self.sidecars[name]

    def host_pid(self) -> int:
        pid = self.init_pid
        if not pid or not os.path.exists(f"/proc/{pid}"):
            raise NotImplementedError(f"the engine runs {self.container.short_id} on another host (no host pid)")
        return pid

    def start_trace(self, out_path: Path, syscalls: str = SYSCALLS) -> SyscallTrace:
        if not strace_available():
            raise NotImplementedError("no strace on this host")
        pid = self.init_pid  # a pid the engine reports but this host lacks: attaching fails, said as SandboxError
        if not pid:
            raise NotImplementedError(f"the engine reports no pid for {self.container.short_id}")
        try:
            return StraceSession(pid, out_path, syscalls=syscalls)
        except (RuntimeError, OSError) as e:
            raise SandboxError(
                f"strace did not attach to {self.container.short_id}: {e}", "strace_unavailable"
            ) from None

    def egress_log(self) -> list[str] | None:
        return self.egress_proxy.log_lines() if self.egress_proxy is not None else None

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._disk is not None:
            self._disk.stop()
        try:
            self.container.remove(force=True, v=True)
        except docker.errors.NotFound:
            pass
        except Exception as e:  # noqa: BLE001 - stop() must never raise: it runs on every path out
            log.warning("sandbox.stop_failed", container=self.container.short_id, error=str(e))
