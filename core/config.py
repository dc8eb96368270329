"""envqa's own configuration (`qa.toml`), one pydantic model per component.

Resolution order: built-in defaults < `qa.toml` (in the working directory, or `--config`) < flags.
Later issues add sections; unknown keys are errors so that a typo never silently does nothing.

The sections live beside this module by what they configure: config_runtime.py (sandbox, validation, queues,
scheduler), config_models.py (sweep, providers, prices, budget, solver, analyst, hunter), config_review.py
(probes, reviser, generator, loop, Slack) and config_online.py (the indexes `qa lint --online` asks); every name
is importable from here. Their default values come from core/defaults.py, the one home of envqa's tuning
constants.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from envqa.core.config_models import (
    AnalystSettings,
    BudgetSettings,
    HunterSettings,
    Price,
    ProviderEndpoint,
    SolverSettings,
    SweepSettings,
    default_prices,
    default_providers,
)
from envqa.core.config_online import OnlineSettings
from envqa.core.config_review import (
    GeneratorSettings,
    LoopSettings,
    ProbeSettings,
    ReviserSettings,
    SlackSettings,
)
from envqa.core.config_runtime import (
    DEFAULT_BASE_IMAGE,
    QueueSettings,
    SandboxSettings,
    SchedulerSettings,
    Section,
    ValidateSettings,
    builtin_queue_defaults,
)
from envqa.core.defaults import HUNT_MIN_ORACLE_RUNS, ORACLE_RUNS
from envqa.core.errors import InputError
from envqa.core.input_files import read_toml

OracleStage = Literal["validate", "hunt", "gate", "generate"]

__all__ = [
    "DEFAULT_BASE_IMAGE",
    "HUNT_MIN_ORACLE_RUNS",
    "AnalystSettings",
    "BudgetSettings",
    "GeneratorSettings",
    "HunterSettings",
    "LoopSettings",
    "OnlineSettings",
    "OracleStage",
    "Price",
    "ProbeSettings",
    "ProviderEndpoint",
    "QAConfig",
    "QueueSettings",
    "ReviserSettings",
    "SandboxSettings",
    "SchedulerSettings",
    "Section",
    "SlackSettings",
    "SolverSettings",
    "SweepSettings",
    "ValidateSettings",
    "builtin_queue_defaults",
    "default_prices",
    "default_providers",
    "load_config",
]


class QAConfig(Section):
    home: Path = Field(
        default_factory=lambda: Path(os.environ.get("QA_HOME", ".qa")),
        description="where runs, the store and versions live",
        json_schema_extra={"doc_default": '`$QA_HOME`, else `".qa"`'},
    )
    # THE number of oracle runs (`--oracle-runs`): validation, the hunt, the gate and the generator each use it
    # unless their own key (`[validate] oracle_runs`, `[probes] oracle_runs`, `[reviser] gate_oracle_runs`,
    # `[generator] oracle_runs`, the settings of earlier releases) is set. Read it through oracle_runs_for.
    oracle_runs: int = Field(
        default=ORACLE_RUNS, ge=1, description="oracle runs each stage wants; a stage's key overrides"
    )
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    validate_: ValidateSettings = Field(default_factory=ValidateSettings, alias="validate")
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    sweep: SweepSettings = Field(default_factory=SweepSettings)
    providers: dict[str, ProviderEndpoint] = Field(
        default_factory=default_providers,
        description="model providers by name (the part of provider/model before the /)",
    )
    prices: dict[str, Price] = Field(
        default_factory=default_prices,
        description="list prices by provider/model; a model with none costs 0 (priced: false)",
    )
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    solver: SolverSettings = Field(default_factory=SolverSettings)
    probes: ProbeSettings = Field(default_factory=ProbeSettings)
    reviser: ReviserSettings = Field(default_factory=ReviserSettings)
    generator: GeneratorSettings = Field(default_factory=GeneratorSettings)
    analyst: AnalystSettings = Field(default_factory=AnalystSettings)
    hunter: HunterSettings = Field(default_factory=HunterSettings)
    loop: LoopSettings = Field(default_factory=LoopSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    online: OnlineSettings = Field(default_factory=OnlineSettings)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def oracle_runs_for(self, stage: OracleStage) -> int:
        """The oracle runs `stage` wants: its own override when set, else the one `oracle_runs` (the hunt: at
        least HUNT_MIN_ORACLE_RUNS, since it needs several runs to see a flaky oracle)."""
        override = {
            "validate": self.validate_.oracle_runs,
            "hunt": self.probes.oracle_runs,
            "gate": self.reviser.gate_oracle_runs,
            "generate": self.generator.oracle_runs,
        }[stage]
        if override is not None:
            return override
        return max(self.oracle_runs, HUNT_MIN_ORACLE_RUNS) if stage == "hunt" else self.oracle_runs

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
    if path and not cfg_path.exists() and not cfg_path.is_symlink():
        raise InputError(str(cfg_path), "config file not found")
    if path or cfg_path.exists() or cfg_path.is_symlink():
        data = read_toml(cfg_path)  # a folder, FIFO, bad encoding or invalid TOML: an InputFileError naming it
    for key, value in (overrides or {}).items():
        node = data
        *parents, leaf = key.split(".")
        for i, p in enumerate(parents):
            node = node.setdefault(p, {})
            if not isinstance(node, dict):  # `probes = 1` in the file, and an override of probes.x
                raise InputError(str(cfg_path), "expected a table", ".".join(parents[: i + 1]))
        node[leaf] = value
    try:
        return QAConfig.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InputError(str(cfg_path), first["msg"], field) from None
