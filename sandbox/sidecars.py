"""Compose sidecars at run time: the task's services beside `main`, on one internal network per trial.

Follows harbor 0.26.0 `harbor/environments/docker/docker.py` (`start`: build, `up --detach --wait`, so every
service is running and every healthcheck healthy before the agent starts; `stop`: `down`) with the Docker
SDK instead of `docker compose` (not installed here, and qa must not need it). What we do differently, and why:
- One INTERNAL network per trial (`internal=True`): the sidecars have no route out (Harbor's compose network
  is public); `main` joins it beside whatever network the task's policy gives it (none: only the sidecars;
  allowlist: the egress proxy's network; public: the bridge). The verifier keeps it when its network is cut.
- Sidecars are built from the task's files through the image map (sandbox/images.py, the same build path,
  cache and deadline as main's image); an `image:` runs only when present locally or mapped: never pulled.
- Limits are main's (cpus, memory, pids), whatever the compose file asks for.
- A sidecar that does not build, start or become healthy in time is infra `sidecar_failed`, never a finding:
  the verdict is about the task, and a sidecar we could not start says nothing about it.
- Everything carries the trial's labels; stopping `main` removes the sidecars and the network, on every path.
"""

from __future__ import annotations

import time
import uuid

import docker.errors
import structlog

from envqa.core.defaults import (
    SIDECAR_POLL_SEC as POLL_SEC,
)
from envqa.core.defaults import (
    SIDECAR_READY_MAX_SEC as READY_MAX_SEC,
)
from envqa.core.defaults import (
    SIDECAR_READY_MIN_SEC as READY_MIN_SEC,
)
from envqa.core.image_map import map_image
from envqa.core.sandbox import BackendProxy, ImageBuildError, Sandbox, SandboxBackend, SandboxError, SandboxSpec
from envqa.core.task_config import MAIN_SERVICE
from envqa.sandbox.compose import ComposeError, ComposeSpec, Service, find_compose, load_compose
from envqa.sandbox.docker_sandbox import DockerSandbox, session_labels
from envqa.sandbox.network import AllowlistBackend

log = structlog.get_logger(__name__)
ERROR_CLASS = "sidecar_failed"


def _fail(message: str) -> SandboxError:
    return SandboxError(message, ERROR_CLASS)


class SidecarSet:
    """`SidecarSet(...).start()` builds and starts every sidecar on a fresh internal network; `close()` removes
    them and the network (idempotent, never raises). `start()` cleans up after itself when it fails."""

    def __init__(self, backend, env, compose: ComposeSpec, limits: SandboxSpec, labels: dict[str, str]):
        self.backend, self.env, self.compose, self.limits = backend, env, compose, limits
        self.client = backend.client
        self.labels = {backend.label: "1", **session_labels(), **labels}
        self.network_name = f"envqa-sidecars-{uuid.uuid4().hex[:10]}"
        self.network = None
        self.containers: dict[str, str] = {}  # service -> container id

    def start(self) -> SidecarSet:
        try:
            self.network = self.client.networks.create(
                self.network_name, driver="bridge", internal=True, labels=self.labels
            )
            images = {s.name: self._image(s) for s in self.compose.sidecars}
            deadline = time.monotonic() + self._ready_budget()
            for s in self.compose.sidecars:  # in dependency order
                for dep, condition in s.depends_on.items():
                    self._wait(dep, condition, deadline)
                self._run(s, images[s.name])
            needed = {
                d
                for s in self.compose.sidecars
                for d, c in s.depends_on.items()
                if c == "service_completed_successfully"
            }
            for s in self.compose.sidecars:  # `up --wait`: running, and healthy where a healthcheck says
                if s.name not in needed:
                    self._wait(s.name, "service_healthy" if s.healthcheck else "service_started", deadline)
        except SandboxError:
            self.close()
            raise
        except docker.errors.DockerException as e:
            self.close()
            raise _fail(f"compose sidecars did not start: {e}") from None
        except BaseException:
            self.close()
            raise
        return self

    def _ready_budget(self) -> float:
        budgets = [s.healthcheck.budget() for s in self.compose.sidecars if s.healthcheck]
        return min(READY_MAX_SEC, max([READY_MIN_SEC, *budgets]))

    def _image(self, s: Service) -> str:
        if s.dockerfile is not None:  # built as main's image is: content-hash tag, image map, build deadline
            sub = self.env.model_copy(
                update={
                    "build_context": s.context,
                    "dockerfile": s.dockerfile,
                    "version": f"{self.env.version}.sidecar.{s.name}",
                }
            )
            try:
                return self.backend.ensure_image(sub)[0]
            except ImageBuildError as e:
                raise _fail(f"sidecar {s.name!r} did not build: {e}\n{e.log_tail}".strip()) from None
        ref = map_image(s.image, self.backend.image_map) or s.image
        try:
            self.client.images.get(ref)
        except docker.errors.ImageNotFound:
            raise _fail(
                f"sidecar {s.name!r}: image {s.image!r} is not present locally and qa never pulls; give the "
                "service a `build:` from the task's files, or map the image in [sandbox] image_map"
            ) from None
        return ref

    def _run(self, s: Service, image: str) -> None:
        api, lim = self.client.api, self.limits
        try:
            created = api.create_container(
                image,
                command=s.command,
                entrypoint=s.entrypoint,
                environment=s.environment or None,
                working_dir=s.working_dir,
                user=s.user,
                detach=True,
                healthcheck=s.healthcheck.engine() if s.healthcheck else None,
                labels={**self.labels, "envqa.sidecar": s.name},
                host_config=api.create_host_config(
                    network_mode=self.network_name,
                    mem_limit=f"{lim.memory_mb}m",
                    memswap_limit=f"{lim.memory_mb}m",
                    nano_cpus=int(lim.cpus * 1e9),
                    pids_limit=lim.pids_limit,
                    init=True,
                ),
                networking_config=api.create_networking_config(
                    {self.network_name: api.create_endpoint_config(aliases=[s.name])}
                ),
            )
            self.containers[s.name] = created["Id"]
            api.start(created["Id"])
        except docker.errors.APIError as e:
            raise _fail(f"sidecar {s.name!r} did not start: {e.explanation or e}") from None

    def _wait(self, name: str, condition: str, deadline: float) -> None:
        """Until `name` meets a depends_on condition; a container that dies or turns unhealthy fails at once."""
        cid = self.containers[name]
        while True:
            state = self.client.api.inspect_container(cid)["State"]
            health = (state.get("Health") or {}).get("Status")
            if condition == "service_completed_successfully" and not state.get("Running"):
                if state.get("ExitCode") == 0:
                    return
                raise _fail(f"sidecar {name!r} exited {state.get('ExitCode')}{self._tail(cid)}")
            if condition != "service_completed_successfully":
                if not state.get("Running"):
                    raise _fail(f"sidecar {name!r} exited {state.get('ExitCode')} as it started{self._tail(cid)}")
                if condition == "service_started" or health == "healthy":
                    return
                if health == "unhealthy":
                    raise _fail(f"sidecar {name!r} is unhealthy (its healthcheck failed){self._tail(cid)}")
                if health is None:
                    raise _fail(f"sidecar {name!r}: a service_healthy dependency without a healthcheck")
            if time.monotonic() > deadline:
                raise _fail(
                    f"sidecar {name!r} did not reach {condition} within {self._ready_budget():g}s{self._tail(cid)}"
                )
            time.sleep(POLL_SEC)

    def _tail(self, cid: str) -> str:
        try:
            text = self.client.api.logs(cid, stdout=True, stderr=True, tail=20).decode(errors="replace").strip()
        except docker.errors.DockerException:
            return ""
        return f"; its last output:\n{text}" if text else ""

    def attach(self, container_id: str) -> None:
        """Put main on the sidecars' network under the name `main` (connected once, or reconnected with it)."""
        try:
            if self.network_name in self._networks_of(container_id):
                self.network.disconnect(container_id, force=True)
            self.network.connect(container_id, aliases=[MAIN_SERVICE])
        except docker.errors.APIError as e:
            raise _fail(f"cannot attach main to the sidecars' network: {e.explanation or e}") from None

    def _networks_of(self, container_id: str) -> list[str]:
        attrs = self.client.api.inspect_container(container_id)
        return list((attrs.get("NetworkSettings") or {}).get("Networks") or {})

    def sandboxes(self) -> dict[str, Sandbox]:
        """Each sidecar as a Sandbox to exec in (collect hooks); stopping main removes them, not these."""
        out = {}
        for name, cid in self.containers.items():
            spec = self.limits.model_copy(
                update={
                    "network": self.network_name,
                    "labels": self.labels,
                    "disk_limit_mb": None,
                    "env": {},
                    "init_dirs": [],
                }
            )
            out[name] = DockerSandbox(self.client, self.client.containers.get(cid), spec)
        return out

    def close(self) -> None:
        for name, cid in list(self.containers.items()):
            try:
                self.client.api.remove_container(cid, force=True, v=True)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as e:
                log.warning("sidecar.remove_failed", service=name, container=cid[:12], error=str(e))
            self.containers.pop(name, None)
        if self.network is not None:
            try:
                self.network.remove()
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as e:
                log.warning("sidecar.network_remove_failed", network=self.network_name, error=str(e))
            self.network = None


class SidecarBackend(BackendProxy):
    """The Docker backend, with the task's compose sidecars started beside every sandbox and removed with it.
    Everything else passes through (BackendProxy); an egress allowlist wraps it from outside. No fake internet
    beside sidecars."""

    withheld = frozenset({"fake_internet"})

    def __init__(self, inner, env):
        super().__init__(inner)
        self.env = env
        self.compose: ComposeSpec | None = None

    def with_sidecars(self, env) -> SandboxBackend:
        return self if env is self.env else SidecarBackend(self.inner, env)

    def with_egress_allowlist(self, allowed_hosts, *, image, upstream="bridge", label="envqa", labels=None):
        return AllowlistBackend(self, image, allowed_hosts, upstream=upstream, label=label, labels=labels)

    def _load(self) -> ComposeSpec:
        if self.compose is None:
            path = self.env.compose_file or find_compose(self.env.build_context)
            if path is None:
                raise _fail(f"{self.env.root}: no compose file under environment/")
            try:
                self.compose = load_compose(path, self.env.root)
            except ComposeError as e:
                raise _fail(str(e)) from None
            for w in self.compose.warnings:
                log.warning("compose.unsupported", env=self.env.name, warning=w)
        return self.compose

    def start(self, spec: SandboxSpec) -> Sandbox:
        compose = self._load()
        sidecars = SidecarSet(self.inner, self.env, compose, spec, spec.labels).start()
        env = {**compose.main_environment, **spec.env}
        for key in ("NO_PROXY", "no_proxy"):  # allowlist mode: the sidecars are reached directly, not by the proxy
            if key in env:
                env[key] = ",".join([env[key], *compose.names])
        own = spec.network == "none"  # no network of its own: main's only network is the sidecars'
        try:
            sandbox = self.inner.start(
                spec.model_copy(update={"env": env, **({"network": sidecars.network_name} if own else {})})
            )
        except BaseException:
            sidecars.close()
            raise
        try:
            sidecars.attach(sandbox.id)
        except BaseException:
            sandbox.stop()
            sidecars.close()
            raise
        sandbox.kept_networks.add(sidecars.network_name)  # cut_network() keeps it: the verifier reaches them
        sandbox.sidecars = sidecars.sandboxes()
        stop = sandbox.stop

        def stop_with_sidecars() -> None:
            try:
                stop()
            finally:
                sidecars.close()

        sandbox.stop = stop_with_sidecars
        return sandbox
