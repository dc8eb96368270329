"""The Docker backend: images built by content hash, one container per trial, limits enforced.

Containers run `sleep infinity` under the engine's docker-init (PID 1, which reaps orphans) and every
command is a `docker exec`, so the agent phase and
the verifier phase share one filesystem while tests/ and solution/ are uploaded only when their phase
starts. Each container carries the `envqa` label: `cleanup()` finds leftovers of crashed runs.
"""

from __future__ import annotations

import fcntl
import json
import shlex
import socket
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import docker
import docker.errors
import requests.exceptions
import structlog
import urllib3.exceptions

from envqa.core.defaults import DOCKER_API_TIMEOUT_SEC
from envqa.core.environment import Environment
from envqa.core.image_map import rewrite_dockerfile
from envqa.core.sandbox import BuildLog, ImageBuildError, SandboxBackend, SandboxError, SandboxSpec, register_backend
from envqa.sandbox import docker_adapter
from envqa.sandbox.docker_sandbox import DockerSandbox, docker_client, session_labels
from envqa.sandbox.images import build_context_tar, image_tag
from envqa.sandbox.network import AllowlistBackend, FakeInternet
from envqa.sandbox.sidecars import SidecarBackend

log = structlog.get_logger(__name__)


class DockerBackend(SandboxBackend):
    def __init__(self, image_map: dict[str, str] | None = None, label: str = "envqa", client=None):
        self.image_map = image_map or {}
        self.label = label
        self._client = client
        self.builds = 0  # images built by this backend instance (benchmarks read it)
        self._tags: dict[str, str] = {}  # environment version -> image tag

    @property
    def connected(self) -> bool:
        """Whether this backend ever reached the engine (if not, it cannot have started anything)."""
        return self._client is not None

    def check(self) -> None:
        self.client  # noqa: B018  (connects and pings: SandboxError docker_unavailable when the engine is down)

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = docker_client()
        return self._client

    def prepare(self, env: Environment) -> tuple[str, bytes]:
        """(tag, context tar) for an environment, without building anything."""
        text, _rewrites, bases = rewrite_dockerfile(env.dockerfile.read_text(), self.image_map)
        base_ids = []
        for ref in bases:
            try:
                base_ids.append(self.client.images.get(ref).id)
            except docker.errors.ImageNotFound:
                base_ids.append(ref)
            except docker.errors.APIError:  # e.g. `FROM ${BASE}`: not a reference until the build resolves it
                base_ids.append(ref)
        context = build_context_tar(env.build_context, env.dockerfile, text)
        return image_tag(context, base_ids), context

    def ensure_image(self, env: Environment, on_log: BuildLog | None = None) -> tuple[str, bool]:
        known = self._tags.get(env.version)  # same content seen before by this backend: skip hashing it
        if known and self._exists(known):
            return known, False
        tag, context = self.prepare(env)
        if self._exists(tag):
            self._tags[env.version] = tag
            return tag, False
        lock_path = Path(tempfile.gettempdir()) / f"envqa-build-{tag.split(':')[1]}.lock"
        with open(lock_path, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building the same image
            if self._exists(tag):
                return tag, False
            self._build(tag, context, env, on_log)
        self.builds += 1
        self._tags[env.version] = tag
        return tag, True

    def _exists(self, tag: str) -> bool:
        try:
            self.client.images.get(tag)
            return True
        except docker.errors.ImageNotFound:
            return False

    def _build(self, tag: str, context: bytes, env: Environment, on_log: BuildLog | None) -> None:
        """Build with a hard deadline that also stops the engine's build.

        `api.build()` hides its HTTP response, and a client-side read timeout leaves the connection
        open: the engine finishes the build anyway and tags the image, so a timed-out build would be a
        cache hit next time. Posting to /build ourselves keeps the socket; shutting it down at the
        deadline makes the engine cancel the build (its intermediate container is removed too).
        """
        timeout = env.config.environment.build_timeout_sec
        tail: list[str] = []
        api = docker.from_env(timeout=DOCKER_API_TIMEOUT_SEC).api
        params = {
            "t": tag,
            "rm": True,
            "forcerm": True,
            "labels": json.dumps({self.label: "1", "envqa.env_version": env.version}),
        }
        expired = threading.Event()
        response = None

        def abort() -> None:
            expired.set()
            if response is not None:
                try:
                    docker_adapter.raw_socket(sock).shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(timeout, abort)
        try:
            response = docker_adapter.post_build(api, context, params)
            sock = docker_adapter.response_socket(api, response)
            timer.start()
            for item in docker_adapter.json_stream(api, response):
                line = (item.get("stream") or item.get("status") or "").rstrip()
                if line:
                    tail = (tail + [line])[-40:]
                    if on_log:
                        on_log(line)
                if "error" in item:
                    raise ImageBuildError(f"image build failed: {item['error'].strip()}", "\n".join(tail))
            if expired.is_set():
                raise ImageBuildError(f"image build exceeded build_timeout_sec={timeout:g}", "\n".join(tail), True)
        except docker.errors.APIError as e:  # before RequestException: APIError is an HTTPError
            raise ImageBuildError(f"image build failed: {e.explanation or e}", "\n".join(tail)) from None
        except ImageBuildError:
            raise
        except (
            requests.exceptions.RequestException,
            urllib3.exceptions.HTTPError,
            OSError,
            ValueError,
            AttributeError,
        ) as e:  # what a socket shut down under a streaming read raises
            if expired.is_set():
                raise ImageBuildError(
                    f"image build exceeded build_timeout_sec={timeout:g}", "\n".join(tail), True
                ) from None
            raise SandboxError(f"image build connection failed: {e}", "docker_unavailable") from None
        finally:
            timer.cancel()
            api.close()
        if expired.is_set():
            raise ImageBuildError(f"image build exceeded build_timeout_sec={timeout:g}", "\n".join(tail), True)

    def start(self, spec: SandboxSpec) -> DockerSandbox:
        labels = {self.label: "1", **session_labels(), **spec.labels}
        try:
            container = self.client.containers.run(
                spec.image,
                entrypoint=self._init_command(spec),
                command=[],
                detach=True,
                network_mode=spec.network if spec.network in ("none", "bridge", "host") else None,
                network=None if spec.network in ("none", "bridge", "host") else spec.network,
                mem_limit=f"{spec.memory_mb}m",
                memswap_limit=f"{spec.memory_mb}m",
                nano_cpus=int(spec.cpus * 1e9),
                pids_limit=spec.pids_limit,
                environment=spec.env,
                labels=labels,
                stop_signal="SIGKILL",
                init=True,  # docker-init as PID 1 reaps orphans: killed fork bombs must not hold the pids limit
            )
        except docker.errors.ImageNotFound:
            raise SandboxError(f"image {spec.image} not found; build it first", "sandbox_start") from None
        except docker.errors.APIError as e:
            raise SandboxError(
                f"cannot start sandbox from {spec.image}: {e.explanation or e}", "sandbox_start"
            ) from None
        return DockerSandbox(self.client, container, spec)

    @staticmethod
    def _init_command(spec: SandboxSpec) -> list[str]:
        """The container's command sleeps forever (every command is an exec); first it creates `init_dirs`."""
        if not spec.init_dirs:
            return ["sleep", "infinity"]
        dirs = " ".join(shlex.quote(d) for d in spec.init_dirs)
        return ["sh", "-c", f"mkdir -p {dirs}; exec sleep infinity"]

    def cleanup(self, labels: dict[str, str] | None = None) -> int:
        filters = [self.label] + [f"{k}={v}" for k, v in (labels or {}).items()]
        removed = 0
        # sparse: listing must not inspect each container, or one removed meanwhile (by another worker's
        # cleanup, or a trial ending) raises NotFound out of the list itself
        for c in self.client.containers.list(all=True, sparse=True, filters={"label": filters}):
            try:
                c.remove(force=True, v=True)
                removed += 1
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as e:  # 409: someone else is already removing it
                if e.status_code != 409:
                    raise
        for net in self.client.networks.list(filters={"label": filters}):  # sidecar/proxy networks left by a crash
            try:
                net.remove()
            except docker.errors.APIError:  # still in use by a live trial, or already gone
                pass
        return removed

    # Optional capabilities (core/sandbox.py)

    def with_egress_allowlist(
        self,
        allowed_hosts: list[str],
        *,
        image: str,
        upstream: str = "bridge",
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ) -> SandboxBackend:
        return AllowlistBackend(self, image, allowed_hosts, upstream=upstream, label=label, labels=labels)

    def with_sidecars(self, env: Environment) -> SandboxBackend:
        return SidecarBackend(self, env)

    @contextmanager
    def fake_internet(
        self,
        serve_dir: Path | None,
        hosts: list[str],
        *,
        image: str,
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ):
        with FakeInternet(self.client, image, serve_dir, hosts, label=label, labels=labels) as net:
            yield net.name


@register_backend("docker")
def backend_from_config(config) -> DockerBackend:
    """`[sandbox] backend = "docker"`: builds through the image map, labels what it starts."""
    return DockerBackend(image_map=config.sandbox.resolved_image_map(), label=config.sandbox.label)
