"""The configuration of where work runs: the sandbox, validation, the queues and the scheduler (`[sandbox]`,
`[validate]`, `[scheduler]`), and `Section`, the base of every section of `qa.toml`.

Part of envqa.core.config (which re-exports every name); defaults come from envqa.core.defaults.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from envqa.core.defaults import (
    CALL_DEADLINE_SEC,
    FOLLOW_DEADLINE_SEC,
    JOB_TIMEOUT_SEC,
    LEASE_TTL_SEC,
    MAX_RESTARTS,
    NOP_RUNS,
    QUEUE_BACKOFF_BASE_SEC,
    QUEUE_BACKOFF_MAX_SEC,
    QUEUE_CONCURRENCY,
    QUEUE_JITTER,
    QUEUE_MAX_ATTEMPTS,
    QUEUE_MAX_PARKS,
    QUEUE_PARK_DEFAULT_SEC,
    RESTART_BACKOFF_SEC,
    RESTART_WINDOW_SEC,
    SANDBOX_EXEC_TIMEOUT_SEC,
    SANDBOX_OUTPUT_LIMIT_BYTES,
    SANDBOX_PIDS_LIMIT,
    SANDBOX_QUEUE_CONCURRENCY,
    SCHEDULER_WORKERS,
    STALL_TIMEOUT_SEC,
    WORKER_POLL_INTERVAL_SEC,
)

DEFAULT_BASE_IMAGE = "envqa-base:bookworm"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SandboxSettings(Section):
    """Where and how trials run. The docker backend is the only one so far."""

    backend: str = Field(default="docker", description="sandbox backend (a name registered in sandbox/backends.py)")
    base_image: str = Field(default=DEFAULT_BASE_IMAGE, description="the local image `{base}` stands for in image_map")
    # `FROM` references (fnmatch patterns) rewritten to a local image: there is no registry here.
    # "{base}" stands for base_image. Set `image_map_enabled = false` where a registry is reachable.
    image_map: dict[str, str] = Field(
        default_factory=lambda: {
            "ubuntu:*": "{base}",
            "ubuntu": "{base}",
            "debian:*": "{base}",
            "debian": "{base}",
            "python:3*": "{base}",
            "python": "{base}",
            "buildpack-deps:*": "{base}",
            "ghcr.io/laude-institute/t-bench/*": "{base}",
        },
        description="`FROM` image (fnmatch pattern) -> local image that replaces it; `{base}` is base_image",
    )
    image_map_enabled: bool = Field(default=True, description="false where a registry is reachable")
    # Network for agent and verifier phases when the environment does not ask for less.
    # "none" keeps tests and untrusted agents off every network; "public" follows the task.
    default_network: str = Field(
        default="none", description='"none" keeps every trial off the network; "public" follows task.toml'
    )
    # The verifier phase's network. "task" (default, as Harbor does): the same network as the agent phase,
    # which follows the task's own setting (and default_network). "none": cut it before the verifier runs.
    # A verifier that downloads while cut makes the run inconclusive (verifier-needs-network), never a finding.
    verifier_network: Literal["task", "none"] = Field(
        default="task", description='"task": the verifier gets the agent phase\'s network (as Harbor); "none": cut it'
    )
    pids_limit: int = Field(default=SANDBOX_PIDS_LIMIT, ge=8, description="processes per container (stops a fork bomb)")
    output_limit_bytes: int = Field(
        default=SANDBOX_OUTPUT_LIMIT_BYTES, ge=1024, description="output kept per command (head and tail)"
    )
    exec_timeout_sec: float = Field(
        default=SANDBOX_EXEC_TIMEOUT_SEC, gt=0, description="a command with no timeout of its own is killed after this"
    )
    label: str = Field(default="envqa", description="Docker label on every container, image and network qa makes")

    def resolved_image_map(self) -> dict[str, str]:
        if not self.image_map_enabled:
            return {}
        return {k: v.replace("{base}", self.base_image) for k, v in self.image_map.items()}


class ValidateSettings(Section):
    oracle_runs: int | None = Field(default=None, ge=1, description="validation's override of `oracle_runs`")
    nop_runs: int = Field(default=NOP_RUNS, ge=1, description="runs of the agent that does nothing (each must fail)")
    pass_threshold: float = Field(default=1.0, description="reward at or above this is a pass")


class QueueSettings(Section):
    """Limit and retry policy of one queue. Unset fields fall back to `[scheduler.defaults]`."""

    concurrency: int | None = Field(default=None, ge=1, description="jobs of this queue running at once, all hosts")
    max_attempts: int | None = Field(default=None, ge=1, description="runs allowed for transient failures")
    backoff_base_sec: float | None = Field(default=None, ge=0, description="first retry delay; doubles each time")
    backoff_max_sec: float | None = Field(default=None, ge=0, description="longest retry delay")
    jitter: float | None = Field(default=None, ge=0, le=1, description="fraction of the delay randomised away")
    park_default_sec: float | None = Field(
        default=None, ge=0, description="park time for a 429/529 with no Retry-After"
    )
    max_parks: int | None = Field(default=None, ge=1, description="rate-limit parks before a job gives up")


def builtin_queue_defaults() -> QueueSettings:
    return QueueSettings(
        concurrency=QUEUE_CONCURRENCY,
        max_attempts=QUEUE_MAX_ATTEMPTS,
        backoff_base_sec=QUEUE_BACKOFF_BASE_SEC,
        backoff_max_sec=QUEUE_BACKOFF_MAX_SEC,
        jitter=QUEUE_JITTER,
        park_default_sec=QUEUE_PARK_DEFAULT_SEC,
        max_parks=QUEUE_MAX_PARKS,
    )


class SchedulerSettings(Section):
    """Per-model queues on Redis (issue 3): `[scheduler.models."openai/gpt-5"] concurrency = 4`.

    mode: "auto" (REDIS_URL set -> "redis", else "embedded" when redis-server is installed, else "local"),
    "embedded" (private redis-server + local workers), "redis" (enqueue to REDIS_URL and follow; workers
    run elsewhere), "local" (in-process, sequential; no Redis at all).
    """

    mode: str = Field(
        default="auto",
        pattern="^(auto|embedded|redis|local)$",
        description="where jobs run; "
        "auto: redis with REDIS_URL, else embedded when redis-server is installed, else local",
    )
    redis_url: str | None = Field(default=None, description="default: the REDIS_URL environment variable")
    workers: int = Field(default=SCHEDULER_WORKERS, ge=1, description="worker processes embedded mode starts")
    lease_ttl_sec: float = Field(default=LEASE_TTL_SEC, gt=0, description="a dead worker's slot comes back after this")
    poll_interval_sec: float = Field(
        default=WORKER_POLL_INTERVAL_SEC, gt=0, description="idle worker's wait between claims"
    )
    job_timeout_sec: int = Field(
        default=JOB_TIMEOUT_SEC, ge=1, description="rq's timeout for one job (then `job_timeout`)"
    )
    # liveness (issue 8): a worker whose loop keeps failing stops instead of spinning; a run stops waiting
    max_restarts: int = Field(
        default=MAX_RESTARTS, ge=0, description="worker loop restarts allowed within restart_window_sec"
    )
    restart_window_sec: float = Field(default=RESTART_WINDOW_SEC, gt=0, description="the window max_restarts counts in")
    restart_backoff_sec: float = Field(
        default=RESTART_BACKOFF_SEC, ge=0, description="first restart delay; doubles, capped at 5 s"
    )
    stall_timeout_sec: float = Field(
        default=STALL_TIMEOUT_SEC,
        ge=0,
        description="Redis mode: exit 3 when a queue holds "
        "work this long with no live worker claiming from it (0: wait forever)",
    )
    follow_deadline_sec: float = Field(
        default=FOLLOW_DEADLINE_SEC,
        gt=0,
        description="longest wait for a batch of queued trials or probes, then `timeout`",
    )
    call_deadline_sec: float = Field(
        default=CALL_DEADLINE_SEC,
        gt=0,
        description="longest wait for one queued model call (the reviser, the generator), then `timeout`",
    )
    defaults: QueueSettings = Field(default_factory=builtin_queue_defaults)
    sandbox: QueueSettings = Field(default_factory=lambda: QueueSettings(concurrency=SANDBOX_QUEUE_CONCURRENCY))
    analysis: QueueSettings = Field(default_factory=QueueSettings)
    models: dict[str, QueueSettings] = Field(
        default_factory=dict, description="per-model queue settings, by normalised provider/model"
    )
