"""envqa's own configuration (`qa.toml`), one pydantic model per component.

Resolution order: built-in defaults < `qa.toml` (in the working directory, or `--config`) < flags.
Later issues add sections; unknown keys are errors so that a typo never silently does nothing.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envqa.errors import InputError

DEFAULT_BASE_IMAGE = "envqa-base:bookworm"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SandboxSettings(Section):
    """Where and how trials run. The docker backend is the only one so far."""

    backend: str = "docker"
    base_image: str = DEFAULT_BASE_IMAGE
    # `FROM` references (fnmatch patterns) rewritten to a local image: there is no registry here.
    # "{base}" stands for base_image. Set `image_map_enabled = false` where a registry is reachable.
    image_map: dict[str, str] = Field(
        default_factory=lambda: {
            "ubuntu:*": "{base}", "ubuntu": "{base}", "debian:*": "{base}", "debian": "{base}",
            "python:3*": "{base}", "python": "{base}", "buildpack-deps:*": "{base}",
            "ghcr.io/laude-institute/t-bench/*": "{base}",
        }
    )
    image_map_enabled: bool = True
    # Network for agent and verifier phases when the environment does not ask for less.
    # "none" keeps tests and untrusted agents off every network; "public" follows the task.
    default_network: str = "none"
    pids_limit: int = Field(default=1024, ge=8)
    output_limit_bytes: int = Field(default=1024 * 1024, ge=1024)
    exec_timeout_sec: float = Field(default=600.0, gt=0)
    label: str = "envqa"

    def resolved_image_map(self) -> dict[str, str]:
        if not self.image_map_enabled:
            return {}
        return {k: v.replace("{base}", self.base_image) for k, v in self.image_map.items()}


class ValidateSettings(Section):
    oracle_runs: int = Field(default=3, ge=1)
    nop_runs: int = Field(default=1, ge=1)
    pass_threshold: float = Field(default=1.0, description="reward at or above this is a pass")


class SchedulerSettings(Section):
    """Per-model queues on Redis (issue 3)."""


class SweepSettings(Section):
    """Solver trials per model (issue 4). No models: no sweep, no API key needed."""

    models: list[str] = Field(default_factory=list)
    trials: int = Field(default=5, ge=1)


class ProbeSettings(Section):
    """The shortcut hunter's deterministic probes (issue 5)."""


class QAConfig(Section):
    home: Path = Field(default_factory=lambda: Path(os.environ.get("QA_HOME", ".qa")))
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    validate_: ValidateSettings = Field(default_factory=ValidateSettings, alias="validate")
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    sweep: SweepSettings = Field(default_factory=SweepSettings)
    probes: ProbeSettings = Field(default_factory=ProbeSettings)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @property
    def runs_dir(self) -> Path:
        return self.home / "runs"

    @property
    def db_path(self) -> Path:
        return self.home / "envqa.db"

    @property
    def checkpoint_path(self) -> Path:
        return self.home / "checkpoints.db"


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> QAConfig:
    """Read qa.toml (explicit path, else ./qa.toml if present) and apply dotted-key overrides."""
    data: dict[str, Any] = {}
    cfg_path = Path(path) if path else Path("qa.toml")
    if path and not cfg_path.is_file():
        raise InputError(str(cfg_path), "config file not found")
    if cfg_path.is_file():
        try:
            data = tomllib.loads(cfg_path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise InputError(str(cfg_path), f"invalid TOML: {e}") from None
    for key, value in (overrides or {}).items():
        node = data
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    try:
        return QAConfig.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InputError(str(cfg_path), first["msg"], field) from None
