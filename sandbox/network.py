"""Networks for egress probes: an internal Docker network with a fake "internet" on it, and allowlist mode.

The fake internet is one container from the local base image running `python3 -m http.server`, reachable
under chosen host names (network aliases) from sandboxes started on the same internal network and from
nowhere else: an internal network has no route out, so tests never touch a real address.

Allowlist mode (`[agent] network_mode = "allowlist"` + `allowed_hosts`): the sandbox sits on a fresh
internal network whose only way out is an egress proxy container (sandbox/egress_proxy.py on the local base
image) that is also attached to the upstream network and lets through only the allowed hosts. The sandbox
gets HTTP_PROXY/HTTPS_PROXY; everything else has no route. Denials are logged by the proxy (`denied()`).
"""

from __future__ import annotations

import io
import tarfile
import time
import uuid
from pathlib import Path

import docker.errors
import structlog

from envqa.core.defaults import NETWORK_READY_SEC
from envqa.core.sandbox import BackendProxy, Sandbox, SandboxBackend, SandboxError, SandboxSpec
from envqa.sandbox.docker_sandbox import session_labels
from envqa.sandbox.images import tar_bytes, tar_path

log = structlog.get_logger(__name__)


class FakeInternet:
    """`with FakeInternet(client, image, serve_dir, hosts) as net:` start sandboxes with `network=net.name`."""

    def __init__(
        self,
        client,
        image: str,
        serve_dir: Path | None,
        hosts: list[str],
        label: str = "envqa",
        labels: dict[str, str] | None = None,
        ready_timeout: float = NETWORK_READY_SEC,
    ):
        self.client, self.image, self.serve_dir, self.hosts = client, image, serve_dir, list(hosts)
        self.labels = {label: "1", **session_labels(), **(labels or {})}
        self.name = f"envqa-net-{uuid.uuid4().hex[:10]}"
        self.ready_timeout = ready_timeout
        self.network = None
        self.container_id: str | None = None

    def __enter__(self) -> FakeInternet:
        try:
            self.network = self.client.networks.create(self.name, driver="bridge", internal=True, labels=self.labels)
            api = self.client.api
            created = api.create_container(
                self.image,
                command=["python3", "-m", "http.server", "80", "--bind", "0.0.0.0", "--directory", "/srv"],
                labels=self.labels,
                detach=True,
                host_config=api.create_host_config(network_mode=self.name, mem_limit="256m"),
                networking_config=api.create_networking_config(
                    {self.name: api.create_endpoint_config(aliases=self.hosts)}
                ),
            )
            self.container_id = created["Id"]
            api.put_archive(self.container_id, "/", _srv_tar(self.serve_dir))
            api.start(self.container_id)
            self._wait_ready()
        except (docker.errors.DockerException, SandboxError) as e:
            self.__exit__(None, None, None)
            raise SandboxError(f"cannot start the fake internet: {e}", "sandbox_start") from None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self) -> None:
        probe = ["python3", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1/', timeout=1)"]
        _wait_until_exec_ok(self.client, self.container_id, probe, self.ready_timeout, "the fake internet")

    def __exit__(self, *exc) -> None:
        _remove(self.client, self.container_id, self.network, self.name)
        self.container_id, self.network = None, None


PROXY_PORT = 3128
PROXY_ALIAS = "egress-proxy"
PROXY_SCRIPT = Path(__file__).with_name("egress_proxy.py")


class EgressProxy:
    """`with EgressProxy(client, image, hosts, upstream) as proxy:` start sandboxes on `proxy.name` with
    `env=proxy.env`; only `hosts` are reachable (through the proxy), on the `upstream` network."""

    def __init__(
        self,
        client,
        image: str,
        allowed_hosts: list[str],
        upstream: str = "bridge",
        label: str = "envqa",
        labels: dict[str, str] | None = None,
        ready_timeout: float = NETWORK_READY_SEC,
    ):
        self.client, self.image, self.allowed_hosts, self.upstream = client, image, list(allowed_hosts), upstream
        self.labels = {label: "1", **session_labels(), **(labels or {})}
        self.name = f"envqa-allow-{uuid.uuid4().hex[:10]}"
        self.ready_timeout = ready_timeout
        self.network = None
        self.container_id: str | None = None

    @property
    def env(self) -> dict[str, str]:
        url = f"http://{PROXY_ALIAS}:{PROXY_PORT}"
        return {
            "HTTP_PROXY": url,
            "HTTPS_PROXY": url,
            "http_proxy": url,
            "https_proxy": url,
            "NO_PROXY": "localhost,127.0.0.1",
            "no_proxy": "localhost,127.0.0.1",
        }

    def __enter__(self) -> EgressProxy:
        try:
            self.network = self.client.networks.create(self.name, driver="bridge", internal=True, labels=self.labels)
            api = self.client.api
            created = api.create_container(
                self.image,
                command=["python3", "/tmp/envqa_egress_proxy.py", str(PROXY_PORT), *self.allowed_hosts],
                labels=self.labels,
                detach=True,
                host_config=api.create_host_config(network_mode=self.upstream, mem_limit="128m"),
            )
            self.container_id = created["Id"]
            api.put_archive(
                self.container_id, "/tmp", tar_bytes("envqa_egress_proxy.py", PROXY_SCRIPT.read_bytes(), 0o644)
            )
            api.connect_container_to_network(self.container_id, self.name, aliases=[PROXY_ALIAS])
            api.start(self.container_id)
            probe = ["python3", "-c", f"import socket; socket.create_connection(('127.0.0.1', {PROXY_PORT}), 1)"]
            _wait_until_exec_ok(self.client, self.container_id, probe, self.ready_timeout, "the egress proxy")
        except (docker.errors.DockerException, SandboxError) as e:
            self.__exit__(None, None, None)
            raise SandboxError(f"cannot start the egress proxy: {e}", "sandbox_start") from None
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def log_lines(self) -> list[str]:
        if not self.container_id:
            return []
        try:
            return (
                self.client.api.logs(self.container_id, stdout=True, stderr=True).decode(errors="replace").splitlines()
            )
        except docker.errors.DockerException:
            return []

    def denied(self) -> list[str]:
        """The proxy's denials so far (`DENIED CONNECT host:443`), the evidence of blocked egress."""
        return [ln for ln in self.log_lines() if ln.startswith("DENIED ")]

    def __exit__(self, *exc) -> None:
        _remove(self.client, self.container_id, self.network, self.name)
        self.container_id, self.network = None, None


class AllowlistBackend(BackendProxy):
    """The same backend; every sandbox that would have a network gets its own egress proxy instead.

    The proxy lives as long as its sandbox: stopping the sandbox removes the proxy and its network too.
    What the proxy denied is kept on the sandbox (`sandbox.egress_denied`) once it stops; while it runs,
    `sandbox.egress_log()` reads the proxy's log. Everything else passes through (BackendProxy); compose
    sidecars start innermost (main joins their network beside the proxy's). No fake internet behind a proxy.
    """

    withheld = frozenset({"fake_internet"})

    def __init__(
        self,
        inner: SandboxBackend,
        image: str,
        allowed_hosts: list[str],
        upstream: str = "bridge",
        label: str = "envqa",
        labels: dict[str, str] | None = None,
    ):
        super().__init__(inner)
        self.image, self.allowed_hosts, self.upstream = image, allowed_hosts, upstream
        self.label, self.labels = label, labels or {}

    def with_egress_allowlist(self, allowed_hosts, *, image, upstream="bridge", label="envqa", labels=None):
        return self  # the network is already chosen (probes wrap the backend for their own reruns)

    def start(self, spec: SandboxSpec) -> Sandbox:
        if spec.network == "none":
            return self.inner.start(spec)
        upstream = self.upstream if spec.network in ("bridge", "host") else spec.network
        proxy = EgressProxy(
            self.inner.client,
            self.image,
            self.allowed_hosts,
            upstream=upstream,
            label=self.label,
            labels={**self.labels, **spec.labels},
        ).__enter__()
        try:
            sandbox = self.inner.start(
                spec.model_copy(update={"network": proxy.name, "env": {**spec.env, **proxy.env}})
            )
        except BaseException:
            proxy.__exit__(None, None, None)
            raise
        stop = sandbox.stop
        sandbox.egress_proxy, sandbox.egress_denied = proxy, []

        def stop_with_proxy() -> None:
            try:
                stop()
            finally:
                if proxy.container_id:
                    sandbox.egress_denied = proxy.denied()
                proxy.__exit__(None, None, None)

        sandbox.stop = stop_with_proxy
        return sandbox


def _wait_until_exec_ok(client, container_id: str, cmd: list[str], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    api = client.api
    while time.monotonic() < deadline:
        exec_id = api.exec_create(container_id, cmd)["Id"]
        api.exec_start(exec_id)
        if api.exec_inspect(exec_id).get("ExitCode") == 0:
            return
        time.sleep(0.1)
    raise SandboxError(f"{what} did not answer within {timeout:g}s", "sandbox_start")


def _remove(client, container_id: str | None, network, name: str) -> None:
    """Remove a helper container and its network; never raises (cleanup runs on every path)."""
    if container_id:
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.DockerException as e:
            log.warning("network_helper.remove_failed", container=container_id[:12], error=str(e))
    if network is not None:
        try:
            network.remove()
        except docker.errors.DockerException as e:
            log.warning("network_helper.network_remove_failed", network=name, error=str(e))


def _srv_tar(serve_dir: Path | None) -> bytes:
    if serve_dir is not None and Path(serve_dir).is_dir():
        return tar_path(Path(serve_dir), "srv")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        top = tarfile.TarInfo("srv")
        top.type, top.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(top)
    return buf.getvalue()
