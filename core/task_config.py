"""task.toml as pydantic models: the Harbor schema, strictly (unknown keys are errors).

Strict because a typo such as `timeout_secs` would otherwise silently fall back to a default and the
environment would run under limits its author never chose.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NetworkMode(StrEnum):
    """Harbor's names; `none` and `open` (DESIGN.md's words) are accepted as aliases."""

    NO_NETWORK = "no-network"
    ALLOWLIST = "allowlist"
    PUBLIC = "public"

    @classmethod
    def _missing_(cls, value: object) -> "NetworkMode | None":
        aliases = {"none": cls.NO_NETWORK, "open": cls.PUBLIC, "off": cls.NO_NETWORK}
        return aliases.get(str(value).lower())


class PhaseNetwork(Strict):
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] = Field(default_factory=list)


class VerifierConfig(PhaseNetwork):
    timeout_sec: float = Field(default=600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None


class AgentConfig(PhaseNetwork):
    timeout_sec: float | None = Field(default=None, gt=0)
    user: str | int | None = None


class SolutionConfig(Strict):
    env: dict[str, str] = Field(default_factory=dict)


class HealthcheckConfig(Strict):
    command: str
    interval_sec: float = 5.0
    timeout_sec: float = 30.0
    start_period_sec: float = 0.0
    start_interval_sec: float = 5.0
    retries: int = 3


class EnvironmentConfig(PhaseNetwork):
    build_timeout_sec: float = Field(default=600.0, gt=0)
    docker_image: str | None = None
    cpus: float = Field(default=1, gt=0)
    memory_mb: int = Field(default=2048, ge=16)
    storage_mb: int = Field(default=10240, gt=0)
    pids_limit: int | None = Field(default=None, ge=8)
    gpus: int = Field(default=0, ge=0)
    gpu_types: list[str] | None = None
    allow_internet: bool = True
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    skills_dir: str | None = None
    healthcheck: HealthcheckConfig | None = None

    def baseline_network(self) -> NetworkMode:
        if self.network_mode is not None:
            return self.network_mode
        return NetworkMode.PUBLIC if self.allow_internet else NetworkMode.NO_NETWORK


class PackageInfo(BaseModel):
    name: str
    description: str = ""
    authors: list[dict[str, Any]] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)


class TaskConfig(Strict):
    schema_version: str = "1.0"
    task: PackageInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None

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
