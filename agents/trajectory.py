"""ATIF-compatible trajectories (Harbor's Agent Trajectory Interchange Format, v1.4 field names).

One `agent/trajectory.json` per solver trial: the steps (system prompt, the instruction, each model
turn with its tool calls, each observation tied to its call id), per-step token/cost metrics and the
totals. Every string passes through `Redactor` before it is written, so a key that leaks into a
command, an observation or an error message is replaced by `[REDACTED]` on disk.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from envqa.core.layout import write_atomic
from envqa.core.models import utcnow

ATIF_VERSION = "ATIF-v1.4"
REDACTED = "[REDACTED]"
# Shapes of common provider/service keys, caught even when we do not know the value.
KEY_PATTERNS = [
    r"sk-ant-[A-Za-z0-9_\-]{16,}",
    r"sk-(?:proj-)?[A-Za-z0-9_\-]{20,}",
    r"xox[abpr]-[A-Za-z0-9\-]{10,}",
    r"AKIA[0-9A-Z]{16}",
    r"gh[pousr]_[A-Za-z0-9]{30,}",
]


class Redactor:
    """Replaces known secret values and key-shaped strings in any JSON-able structure."""

    def __init__(self, secrets: list[str]):
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)
        self._pattern = re.compile("|".join(KEY_PATTERNS))

    def text(self, s: str) -> str:
        for secret in self.secrets:
            s = s.replace(secret, REDACTED)
        return self._pattern.sub(REDACTED, s)

    def value(self, v: Any) -> Any:
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            return {self.text(str(k)): self.value(x) for k, x in v.items()}
        return v


class AtifToolCall(BaseModel):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ObservationResult(BaseModel):
    source_call_id: str | None = None
    content: str


class Observation(BaseModel):
    results: list[ObservationResult] = Field(default_factory=list)


class StepMetrics(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0


class Step(BaseModel):
    step_id: int
    timestamp: datetime = Field(default_factory=utcnow)
    source: Literal["system", "user", "agent"]
    message: str = ""
    model_name: str | None = None
    tool_calls: list[AtifToolCall] | None = None
    observation: Observation | None = None
    metrics: StepMetrics | None = None
    extra: dict[str, Any] | None = None


class AgentInfo(BaseModel):
    name: str
    version: str
    model_name: str | None = None


class FinalMetrics(BaseModel):
    total_prompt_tokens: int = 0
    total_completion_tokens: int = 0
    total_cached_tokens: int = 0
    total_cost_usd: float = 0.0
    total_steps: int = 0
    extra: dict[str, Any] = Field(default_factory=dict)


class Trajectory(BaseModel):
    schema_version: str = ATIF_VERSION
    session_id: str
    agent: AgentInfo
    steps: list[Step] = Field(default_factory=list)
    notes: str | None = None
    final_metrics: FinalMetrics = Field(default_factory=FinalMetrics)
    extra: dict[str, Any] = Field(default_factory=dict)


class TrajectoryWriter:
    """Builds the trajectory step by step and rewrites the file after each step (a crash keeps the prefix)."""

    def __init__(self, path: Path, session_id: str, agent: AgentInfo, redactor: Redactor):
        self.path, self.redactor = path, redactor
        self.trajectory = Trajectory(session_id=session_id, agent=agent)

    def add(self, source: str, message: str = "", **fields) -> Step:
        step = Step(step_id=len(self.trajectory.steps) + 1, source=source, message=message, **fields)
        self.trajectory.steps.append(step)
        self.flush()
        return step

    def finish(self, final: FinalMetrics, notes: str | None = None, **extra) -> None:
        final.total_steps = len(self.trajectory.steps)
        self.trajectory.final_metrics = final
        self.trajectory.notes = notes
        self.trajectory.extra.update(extra)
        self.flush()

    def flush(self) -> None:
        data = self.redactor.value(self.trajectory.model_dump(mode="json", exclude_none=True))
        write_atomic(self.path, Trajectory.model_validate(data).model_dump_json(indent=2, exclude_none=True))


def read_final_metrics(trial_dir: str | Path | None) -> FinalMetrics | None:
    """The totals of a finished trial, or None when it has no trajectory (e.g. not a model agent)."""
    if not trial_dir:
        return None
    path = Path(trial_dir) / "agent" / "trajectory.json"
    if not path.is_file():
        return None
    try:
        return Trajectory.model_validate_json(path.read_text()).final_metrics
    except ValueError:
        return None
