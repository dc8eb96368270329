"""task.toml as pydantic models: Harbor's task schema 1.4, forward-compatible.

Follows harbor 0.26.0 `harbor/models/task/config.py` (models, defaults, validators), `verifier_mode.py` (the
verifier's mode) and `step_name.py`; our own code, since Harbor needs Python 3.12 (docs/reference/formats.md lists
what we do differently: our resource defaults, `allow_internet` kept as declared, network aliases).

Unknown keys: Harbor ignores them; a strict schema (ours until 1.4) made every Harbor release an outage, and
silence hides a typo (`timeout_secs` falls back to a default). So every model keeps what it does not know
(`extra="allow"`) and core/task_config_keys.py names each key, its table and the near spelling in a warning.
Bad VALUES of known keys still fail validation (exit 2, file and field named).
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from envqa.core.task_hosts import validate_allowed_hosts

MAIN_SERVICE = "main"  # harbor/constants.py MAIN_SERVICE_NAME: the agent's compose service
_SERVICE_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")
_ORG_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")
_BAD_STEP_CHARS = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')
_DEVICE_NAME = re.compile(r"^(CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|(?:COM|LPT)[1-9¹²³])$", re.IGNORECASE)


class Open(BaseModel):
    """A table of task.toml: known keys validated, unknown keys kept for the warning (never an error)."""

    model_config = ConfigDict(extra="allow")


class NetworkMode(StrEnum):
    """Harbor's names; `none` and `open` (DESIGN.md's words) are accepted as aliases."""

    NO_NETWORK = "no-network"
    ALLOWLIST = "allowlist"
    PUBLIC = "public"

    @classmethod
    def _missing_(cls, value: object) -> NetworkMode | None:
        aliases = {"none": cls.NO_NETWORK, "open": cls.PUBLIC, "off": cls.NO_NETWORK}
        return aliases.get(str(value).lower())


class TaskOS(StrEnum):
    """config.py TaskOS; case-insensitive like Harbor's `normalize_os`."""

    LINUX = "linux"
    WINDOWS = "windows"


class VerifierEnvironmentMode(StrEnum):
    """config.py VerifierEnvironmentMode: the verifier runs in the agent's container or in its own."""

    SHARED = "shared"
    SEPARATE = "separate"


class MultiStepRewardStrategy(StrEnum):
    """config.py MultiStepRewardStrategy: `mean` (per-key means over steps, Harbor's default) or `final`."""

    MEAN = "mean"
    FINAL = "final"


def _service_name(value: str | None) -> str | None:
    """config.py `_validate_compose_service_name`."""
    if value is None:
        return None
    value = value.strip()
    if not _SERVICE_NAME.match(value):
        raise ValueError(
            f"invalid Docker Compose service name {value!r}: it must start with a letter or digit and "
            "contain only letters, digits, '-', '_' and '.'"
        )
    return value


def validate_step_name(name: str) -> str:
    """step_name.py `validate_step_name`: a step's name is one portable directory name under steps/."""
    if (
        not name.strip()
        or name in {".", ".."}
        or name.endswith((".", " "))
        or _BAD_STEP_CHARS.search(name)
        or _DEVICE_NAME.fullmatch(name.partition(".")[0].rstrip(" "))
    ):
        raise ValueError(
            f"invalid step name {name!r}: a step name is one portable directory name (no path "
            "separators, control or reserved characters, device names, or trailing dots/spaces)"
        )
    if len(name.encode("utf-8")) > 255:
        raise ValueError("a step name is at most 255 UTF-8 bytes")
    return name


class PhaseNetwork(Open):
    """config.py PhaseNetworkPolicyConfig: an [agent]/[verifier] override, used only when network_mode is set;
    allowed_hosts only with network_mode = "allowlist"."""

    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, hosts: list[str]) -> list[str]:
        return validate_allowed_hosts(hosts)

    @model_validator(mode="after")
    def _hosts_need_allowlist(self) -> PhaseNetwork:
        if self.allowed_hosts and self.network_mode != NetworkMode.ALLOWLIST:
            raise ValueError('allowed_hosts is only valid with network_mode = "allowlist"')
        return self


class HealthcheckConfig(Open):
    """config.py HealthcheckConfig (Docker HEALTHCHECK semantics)."""

    command: str
    interval_sec: float = 5.0
    timeout_sec: float = 30.0
    start_period_sec: float = 0.0
    start_interval_sec: float = 5.0
    retries: int = 3


class TpuSpec(Open):
    """config.py TpuSpec."""

    type: str = Field(min_length=1)
    topology: str

    @field_validator("topology")
    @classmethod
    def _topology(cls, v: str) -> str:
        if not re.fullmatch(r"[1-9]\d*(x[1-9]\d*)+", v.strip()):
            raise ValueError(f"invalid TPU topology {v!r}: expected dimensions such as '2x4' or '2x2x1'")
        return v.strip()


def _size_mb(size: str) -> int:
    """config.py EnvironmentConfig._parse_size_to_mb: the deprecated `memory = "2G"` form."""
    s = size.strip().upper()
    units = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}
    if not s or s[-1] not in units:
        raise ValueError(f"invalid size {size!r}: expected a form like '1G' or '512M'")
    return int(float(s[:-1]) * units[s[-1]])


class EnvironmentConfig(PhaseNetwork):
    """config.py EnvironmentConfig (also the schema of [verifier.environment] and a step's)."""

    build_timeout_sec: float = Field(default=600.0, gt=0)
    docker_image: str | None = None
    os: TaskOS = TaskOS.LINUX
    cpus: float = Field(default=1, gt=0)
    memory_mb: int = Field(default=2048, ge=16)
    storage_mb: int = Field(default=10240, gt=0)
    pids_limit: int | None = Field(default=None, ge=8)
    gpus: int = Field(default=0, ge=0)
    gpu_types: list[str] | None = None
    tpu: TpuSpec | None = None
    allow_internet: bool = True
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    skills_dir: str | None = None
    healthcheck: HealthcheckConfig | None = None
    workdir: str | None = None

    @field_validator("os", mode="before")
    @classmethod
    def _os_lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    @model_validator(mode="before")
    @classmethod
    def _legacy_sizes(cls, data: Any) -> Any:
        """Deprecated `memory`/`storage` strings become memory_mb/storage_mb; a conflict is an error."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for old, new in (("memory", "memory_mb"), ("storage", "storage_mb")):
            if isinstance(data.get(old), str):
                mb = _size_mb(data.pop(old))
                if new in data and data[new] != mb:
                    raise ValueError(f"conflicting {old!r} ({mb} MB) and {new!r} ({data[new]!r})")
                data.setdefault(new, mb)
        return data

    @model_validator(mode="after")
    def _hosts_need_allowlist(self) -> EnvironmentConfig:
        if self.allowed_hosts and self.baseline_network() != NetworkMode.ALLOWLIST:
            raise ValueError('allowed_hosts is only valid with network_mode = "allowlist"')
        return self

    def baseline_network(self) -> NetworkMode:
        if self.network_mode is not None:
            return self.network_mode
        return NetworkMode.PUBLIC if self.allow_internet else NetworkMode.NO_NETWORK


class ArtifactConfig(Open):
    """config.py ArtifactConfig: a container path collected after the agent (and handed to a separate
    verifier). `destination` is relative to the trial's artifacts directory; a sidecar's source is absolute."""

    source: str
    destination: str | None = None
    exclude: list[str] = Field(default_factory=list)
    service: str | None = None

    @field_validator("service")
    @classmethod
    def _service(cls, v: str | None) -> str | None:
        return _service_name(v)

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        if any(part == ".." for part in PurePosixPath(v).parts):
            raise ValueError(f"an artifact source must not contain '..' components, got {v!r}")
        return v

    @field_validator("destination")
    @classmethod
    def _destination(cls, v: str | None) -> str | None:
        if not v:
            return None
        path = PurePosixPath(v)
        if "\\" in v or path.is_absolute() or not path.parts or ".." in path.parts:
            raise ValueError(f"an artifact destination is a relative path with '/' separators and no '..', got {v!r}")
        if v.rstrip("/") == "manifest.json":
            raise ValueError("artifact destination 'manifest.json' is reserved for the collection manifest")
        return v

    @model_validator(mode="after")
    def _sidecar_source_absolute(self) -> ArtifactConfig:
        if self.service not in (None, MAIN_SERVICE) and not re.match(r"^(/|[A-Za-z]:[/\\])", self.source):
            raise ValueError(f"artifact source {self.source!r} from service {self.service!r} must be an absolute path")
        return self


def artifact_entries(entries: list[str | ArtifactConfig]) -> list[ArtifactConfig]:
    """artifacts.py `normalize_artifact_entries`: the string form is `{source = ...}`."""
    return [ArtifactConfig(source=e) if isinstance(e, str) else e for e in entries]


class VerifierCollectConfig(Open):
    """config.py VerifierCollectConfig: a command run in a compose service after the agent phase, to
    snapshot state into files the artifacts then collect."""

    command: str
    service: str = MAIN_SERVICE
    timeout_sec: float = Field(default=60.0, gt=0)
    user: str | int | None = None

    @field_validator("service")
    @classmethod
    def _service(cls, v: str) -> str:
        name = _service_name(v)
        if not name:
            raise ValueError("a collect hook's service must not be empty")
        return name


class VerifierConfig(PhaseNetwork):
    """config.py VerifierConfig. environment_mode unset: `separate` when [verifier.environment] is given,
    else `shared` (verifier_mode.py); `shared` together with an environment is an error."""

    timeout_sec: float = Field(default=600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    environment_mode: VerifierEnvironmentMode | None = None
    environment: EnvironmentConfig | None = None
    collect: list[VerifierCollectConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _mode_matches_environment(self) -> VerifierConfig:
        if self.environment_mode == VerifierEnvironmentMode.SHARED and self.environment is not None:
            raise ValueError(
                'environment_mode = "shared" is incompatible with [verifier.environment]; omit the '
                'environment or set environment_mode = "separate"'
            )
        return self

    def declared_mode(self) -> VerifierEnvironmentMode | None:
        """verifier_mode.py `_resolve_mode`: explicit mode, else separate when an environment is given."""
        if self.environment_mode is not None:
            return self.environment_mode
        return VerifierEnvironmentMode.SEPARATE if self.environment is not None else None


class AgentConfig(PhaseNetwork):
    timeout_sec: float | None = Field(default=None, gt=0)
    user: str | int | None = None


class SolutionConfig(Open):
    env: dict[str, str] = Field(default_factory=dict)


class Author(Open):
    name: str
    email: str | None = None


class PackageInfo(Open):
    """config.py PackageInfo: [task] name is `org/name`."""

    name: str
    version: str | None = Field(default=None, min_length=1)
    description: str = ""
    authors: list[Author] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _org_name(cls, v: str) -> str:
        if not _ORG_NAME.match(v) or ".." in v:
            raise ValueError(f"a package name is 'org/name' (letters, digits, '.', '_', '-'), got {v!r}")
        return v


class StepConfig(Open):
    """config.py StepConfig: one [[steps]] entry; its files are steps/<name>/ (core/task_layout.py).
    min_reward: a float gates on the `reward` key, a table on each key it names (missing counts as -inf)."""

    name: str
    agent: AgentConfig = Field(default_factory=AgentConfig)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    min_reward: float | dict[str, float] | None = None
    healthcheck: HealthcheckConfig | None = None
    artifacts: list[str | ArtifactConfig] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return validate_step_name(v)


class TaskConfig(Open):
    """config.py TaskConfig (schema 1.4). `version` is the older spelling of `schema_version`."""

    schema_version: str = "1.0"
    task: PackageInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None
    multi_step_reward_strategy: MultiStepRewardStrategy | None = None
    steps: list[StepConfig] | None = None
    artifacts: list[str | ArtifactConfig] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _rename_version(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            data.setdefault("schema_version", str(data.pop("version")))
        return data

    @field_validator("schema_version", mode="before")
    @classmethod
    def _version_as_text(cls, v: Any) -> str:
        return str(v)

    @field_validator("steps")
    @classmethod
    def _unique_step_names(cls, steps: list[StepConfig] | None) -> list[StepConfig] | None:
        """Unique including case and Unicode normalization (a step is a directory on every host OS)."""
        seen: set[str] = set()
        for step in steps or []:
            key = unicodedata.normalize("NFC", step.name).casefold()
            if key in seen:
                raise ValueError(f"step names must be unique (ignoring case and Unicode normalization): {step.name!r}")
            seen.add(key)
        return steps

    def verifier_mode(self, step: StepConfig | None = None) -> VerifierEnvironmentMode:
        """verifier_mode.py `resolve_step_verifier_mode`/`resolve_task_verifier_mode`: the step's mode, else
        the task's, else shared."""
        declared = step.verifier.declared_mode() if step is not None else None
        return declared or self.verifier.declared_mode() or VerifierEnvironmentMode.SHARED

    def verifier_environment(self, step: StepConfig | None = None) -> EnvironmentConfig | None:
        """verifier_mode.py `resolve_effective_verifier_env_config`: None in shared mode; else the step's
        [verifier.environment], the task's, or a copy of [environment]."""
        if self.verifier_mode(step) != VerifierEnvironmentMode.SEPARATE:
            return None
        if step is not None and step.verifier.environment is not None:
            return step.verifier.environment
        return self.verifier.environment or self.environment.model_copy(deep=True)

    def has_separate_verifier(self) -> bool:
        """verifier_mode.py `task_has_any_separate_verifier`."""
        passes: list[StepConfig | None] = list(self.steps or []) or [None]
        return any(self.verifier_mode(s) == VerifierEnvironmentMode.SEPARATE for s in passes)

    def reward_strategy(self) -> MultiStepRewardStrategy | None:
        """The multi-step strategy (Harbor's publisher defaults it to `mean`); None for a single-step task."""
        if not self.steps:
            return None
        return self.multi_step_reward_strategy or MultiStepRewardStrategy.MEAN
