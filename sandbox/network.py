"""Networks for egress probes: an internal Docker network with a fake "internet" on it.

The fake internet is one container from the local base image running `python3 -m http.server`, reachable
under chosen host names (network aliases) from sandboxes started on the same internal network and from
nowhere else: an internal network has no route out, so tests never touch a real address.
"""

from __future__ import annotations

import io
import tarfile
import time
import uuid
from pathlib import Path

import docker.errors
import structlog

from envqa.sandbox.base import SandboxError
from envqa.sandbox.images import tar_path

log = structlog.get_logger(__name__)


class FakeInternet:
    """`with FakeInternet(client, image, serve_dir, hosts) as net:` start sandboxes with `network=net.name`."""

    def __init__(self, client, image: str, serve_dir: Path | None, hosts: list[str], label: str = "envqa",
                 labels: dict[str, str] | None = None, ready_timeout: float = 30.0):
        self.client, self.image, self.serve_dir, self.hosts = client, image, serve_dir, list(hosts)
        self.labels = {label: "1", **(labels or {})}
        self.name = f"envqa-net-{uuid.uuid4().hex[:10]}"
        self.ready_timeout = ready_timeout
        self.network = None
        self.container_id: str | None = None

    def __enter__(self) -> "FakeInternet":
        try:
            self.network = self.client.networks.create(self.name, driver="bridge", internal=True,
                                                       labels=self.labels)
            api = self.client.api
            created = api.create_container(
                self.image, command=["python3", "-m", "http.server", "80", "--bind", "0.0.0.0", "--directory", "/srv"],
                labels=self.labels, detach=True,
                host_config=api.create_host_config(network_mode=self.name, mem_limit="256m"),
                networking_config=api.create_networking_config(
                    {self.name: api.create_endpoint_config(aliases=self.hosts)}),
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
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            api = self.client.api
            exec_id = api.exec_create(self.container_id, probe)["Id"]
            api.exec_start(exec_id)
            if api.exec_inspect(exec_id).get("ExitCode") == 0:
                return
            time.sleep(0.1)
        raise SandboxError(f"the fake internet did not answer within {self.ready_timeout:g}s", "sandbox_start")

    def __exit__(self, *exc) -> None:
        if self.container_id:
            try:
                self.client.api.remove_container(self.container_id, force=True, v=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as e:
                log.warning("fake_internet.remove_failed", error=str(e))
            self.container_id = None
        if self.network is not None:
            try:
                self.network.remove()
            except docker.errors.DockerException as e:
                log.warning("fake_internet.network_remove_failed", network=self.name, error=str(e))
            self.network = None


def _srv_tar(serve_dir: Path | None) -> bytes:
    if serve_dir is not None and Path(serve_dir).is_dir():
        return tar_path(Path(serve_dir), "srv")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        top = tarfile.TarInfo("srv")
        top.type, top.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(top)
    return buf.getvalue()
