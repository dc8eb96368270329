"""A task's `environment/docker-compose.yaml`, read as the subset qa runs: the sidecars beside `main`.

Follows harbor 0.26.0 `harbor/environments/docker/`: `docker-compose-build.yaml` defines `main` (built from
environment/, `sleep infinity`), the task's compose file is merged over it (so `main` may appear only to add to
it), and `docker compose up --detach --wait` starts every service and waits for the healthchecks
(`runtime.py` `up_args`). Service names follow `models/task/config.py` `_validate_compose_service_name`.

What we do differently, and why: there is no `docker compose` here (and qa must not need it), so the file is
read into pydantic models and run with the Docker SDK (sandbox/sidecars.py). Only these keys run: `build`
(`context`, `dockerfile`), `image` (only an image present locally or one the image map rewrites: qa never
pulls), `environment`, `command`, `entrypoint`, `working_dir`, `user`, `healthcheck`, `depends_on`;
`expose`/`ports`/`container_name`/`restart`/`pull_policy` are ignored (nothing is published on the host); any
other key is a warning that names it, and the service runs without it. On `main`, only `environment` is used:
main is built from environment/Dockerfile as every task's is. `${VAR:-default}` takes its default; a bare
`${VAR}` is empty (the host's environment never reaches a task).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from envqa.core.task_config import MAIN_SERVICE
from envqa.core.task_layout import COMPOSE_NAMES

SERVICE_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")  # config.py _COMPOSE_SERVICE_NAME_PATTERN
SUPPORTED = {
    "build",
    "image",
    "environment",
    "command",
    "entrypoint",
    "working_dir",
    "user",
    "healthcheck",
    "depends_on",
}
IGNORED = {"expose", "ports", "container_name", "restart", "pull_policy", "hostname", "stop_grace_period"}
CONDITIONS = {"service_started", "service_healthy", "service_completed_successfully"}
VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}")
DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")
UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


class ComposeError(Exception):
    """The compose file cannot be run as written (the trial becomes infra `sidecar_failed`, not a finding)."""


class Healthcheck(BaseModel):
    """compose `healthcheck`, in the engine's units (seconds here, nanoseconds when sent)."""

    test: list[str]
    interval: float = 30.0
    timeout: float = 30.0
    retries: int = 3
    start_period: float = 0.0

    def engine(self) -> dict:
        ns = 1_000_000_000
        return {
            "test": self.test,
            "interval": int(self.interval * ns),
            "timeout": int(self.timeout * ns),
            "retries": self.retries,
            "start_period": int(self.start_period * ns),
        }

    def budget(self) -> float:
        """How long the engine may take to call this service healthy or unhealthy."""
        return self.start_period + (self.retries + 1) * (self.interval + self.timeout)


class Service(BaseModel):
    name: str
    context: Path | None = None  # build context (absolute, inside the task)
    dockerfile: Path | None = None  # absolute
    image: str | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    command: list[str] | None = None
    entrypoint: list[str] | None = None
    working_dir: str | None = None
    user: str | None = None
    healthcheck: Healthcheck | None = None
    depends_on: dict[str, str] = Field(default_factory=dict)  # service -> condition


class ComposeSpec(BaseModel):
    path: Path
    sidecars: list[Service]  # in start order: every service after what it depends on
    main_environment: dict[str, str] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.sidecars]


def find_compose(build_context: Path) -> Path | None:
    return next((build_context / n for n in COMPOSE_NAMES if (build_context / n).is_file()), None)


def load_compose(path: Path, task_root: Path) -> ComposeSpec:
    """Parse and check; raises ComposeError naming the file and service."""
    try:
        doc = yaml.safe_load(path.read_text(errors="replace"))
    except yaml.YAMLError as e:
        raise ComposeError(f"{path}: not valid YAML: {e}") from None
    services = doc.get("services") if isinstance(doc, dict) else None
    if not isinstance(services, dict):
        raise ComposeError(f"{path}: expected a `services:` mapping")
    warnings: list[str] = []
    for key in sorted(set(doc) - {"services", "version", "name"}):
        warnings.append(f"{path.name}: top-level key {key!r} is not supported by qa (ignored)")
    out: dict[str, Service] = {}
    main_env: dict[str, str] = {}
    for name, raw in services.items():
        name = str(name)
        where = f"{path}: services.{name}"
        if not SERVICE_NAME.match(name):
            raise ComposeError(f"{where}: invalid service name (letters, digits, '_', '.', '-'; not first)")
        raw = raw or {}
        if not isinstance(raw, dict):
            raise ComposeError(f"{where}: expected a mapping of keys")
        if name == MAIN_SERVICE:
            main_env = _environment(raw.get("environment"), where, warnings)
            for key in sorted(set(raw) - {"environment", "build", "depends_on", "healthcheck"} - IGNORED):
                warnings.append(f"{where}.{key}: not supported on main (main runs from environment/Dockerfile)")
            continue
        for key in sorted(set(raw) - SUPPORTED - IGNORED):
            warnings.append(f"{where}.{key}: not supported by qa (ignored; the service runs without it)")
        out[name] = _service(name, raw, path, task_root, where, warnings)
    for s in out.values():
        for dep in list(s.depends_on):
            if dep == MAIN_SERVICE:
                warnings.append(f"{path}: services.{s.name}.depends_on: main starts after the sidecars (ignored)")
                del s.depends_on[dep]
            elif dep not in out:
                raise ComposeError(f"{path}: services.{s.name}.depends_on names unknown service {dep!r}")
    return ComposeSpec(path=path, sidecars=_ordered(out, path), main_environment=main_env, warnings=warnings)


def _service(name: str, raw: dict, path: Path, task_root: Path, where: str, warnings: list[str]) -> Service:
    s = Service(
        name=name,
        environment=_environment(raw.get("environment"), where, warnings),
        command=_argv(raw.get("command"), f"{where}.command"),
        entrypoint=_argv(raw.get("entrypoint"), f"{where}.entrypoint"),
        working_dir=_opt_str(raw.get("working_dir")),
        user=_opt_str(raw.get("user")),
        healthcheck=_healthcheck(raw.get("healthcheck"), f"{where}.healthcheck"),
        depends_on=_depends_on(raw.get("depends_on"), f"{where}.depends_on"),
    )
    build = raw.get("build")
    if build is not None:
        if isinstance(build, str):
            build = {"context": build}
        if not isinstance(build, dict):
            raise ComposeError(f"{where}.build: expected a path or {{context, dockerfile}}")
        for key in sorted(set(build) - {"context", "dockerfile"}):
            warnings.append(f"{where}.build.{key}: not supported by qa (ignored)")
        context = (path.parent / str(build.get("context") or ".")).resolve()
        dockerfile = (context / str(build.get("dockerfile") or "Dockerfile")).resolve()
        for p, what in ((context, "build.context"), (dockerfile, "build.dockerfile")):
            if not p.is_relative_to(task_root):
                raise ComposeError(f"{where}.{what}: {p} is outside the task (qa builds only from the task's files)")
        if not context.is_dir():
            raise ComposeError(f"{where}.build.context: {context} is not a directory")
        if not dockerfile.is_file():
            raise ComposeError(f"{where}.build.dockerfile: {dockerfile} does not exist")
        s.context, s.dockerfile = context, dockerfile
    elif raw.get("image"):
        s.image = str(raw["image"])
    else:
        raise ComposeError(f"{where}: needs `build:` (qa builds sidecars from the task's files) or a local `image:`")
    return s


def _interpolate(value: str) -> str:
    return VAR.sub(lambda m: m.group(2) or "", value)


def _environment(raw, where: str, warnings: list[str]) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, list):
        pairs = [str(item).partition("=") for item in raw]
        raw = {k: v for k, sep, v in pairs if sep}  # a bare `NAME` passes the host's value: not here
    if not isinstance(raw, dict):
        raise ComposeError(f"{where}.environment: expected a mapping or a list of NAME=value")
    out = {}
    for k, v in raw.items():
        text = "" if v is None else ("true" if v is True else "false" if v is False else str(v))
        if VAR.search(text) and not all(m.group(2) is not None for m in VAR.finditer(text)):
            warnings.append(f"{where}.environment.{k}: ${{VAR}} without a default is empty (no host environment)")
        out[str(k)] = _interpolate(text)
    return out


def _argv(raw, where: str) -> list[str] | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return shlex.split(_interpolate(raw))
    if isinstance(raw, list):
        return [_interpolate(str(x)) for x in raw]
    raise ComposeError(f"{where}: expected a string or a list")


def _opt_str(raw) -> str | None:
    return None if raw is None else str(raw)


def seconds(raw, where: str) -> float:
    """A compose duration (`1m30s`, `500ms`, or a number of seconds)."""
    if isinstance(raw, (int, float)):
        return float(raw)
    text = str(raw).strip()
    parts = DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ComposeError(f"{where}: {raw!r} is not a duration (e.g. 1s, 500ms, 1m30s)")
    return sum(float(n) * UNITS[u] for n, u in parts)


def _healthcheck(raw, where: str) -> Healthcheck | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ComposeError(f"{where}: expected a mapping (test, interval, timeout, retries, start_period)")
    if raw.get("disable"):
        return None
    test = raw.get("test")
    if isinstance(test, str):
        test = ["CMD-SHELL", test]
    if not isinstance(test, list) or not test or str(test[0]) not in ("CMD", "CMD-SHELL", "NONE"):
        raise ComposeError(f"{where}.test: expected a string or a list starting with CMD or CMD-SHELL")
    if test[0] == "NONE":
        return None
    return Healthcheck(
        test=[str(t) for t in test],
        **{k: seconds(raw[k], f"{where}.{k}") for k in ("interval", "timeout", "start_period") if k in raw},
        **({"retries": int(raw["retries"])} if "retries" in raw else {}),
    )


def _depends_on(raw, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, list):
        return {str(d): "service_started" for d in raw}
    if not isinstance(raw, dict):
        raise ComposeError(f"{where}: expected a list of services or a mapping")
    out = {}
    for dep, cond in raw.items():
        condition = (cond or {}).get("condition", "service_started") if isinstance(cond, dict) else "service_started"
        if condition not in CONDITIONS:
            raise ComposeError(f"{where}.{dep}.condition: {condition!r} (expected one of {sorted(CONDITIONS)})")
        out[str(dep)] = condition
    return out


def _ordered(services: dict[str, Service], path: Path) -> list[Service]:
    """Every service after what it depends on; a cycle is an error naming it."""
    done: list[Service] = []
    seen: set[str] = set()

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise ComposeError(f"{path}: depends_on cycle {' -> '.join(stack + (name,))}")
        if name in seen:
            return
        for dep in services[name].depends_on:
            visit(dep, stack + (name,))
        seen.add(name)
        done.append(services[name])

    for name in sorted(services):
        visit(name, ())
    return done
