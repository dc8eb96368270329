"""envqa's own configuration (`qa.toml`), one pydantic model per component.

Resolution order: built-in defaults < `qa.toml` (in the working directory, or `--config`) < flags.
Later issues add sections; unknown keys are errors so that a typo never silently does nothing.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envqa.core.errors import InputError
from envqa.core.registry import DEFAULT_EXPLOITS

DEFAULT_BASE_IMAGE = "envqa-base:bookworm"
# The hunt calls an oracle failure among passes flaky; it wants at least this many runs in all (validation's
# count towards them) unless `[probes] oracle_runs` says otherwise. See QAConfig.oracle_runs_for.
HUNT_MIN_ORACLE_RUNS = 5
OracleStage = Literal["validate", "hunt", "gate", "generate"]


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
    pids_limit: int = Field(default=1024, ge=8, description="processes per container (stops a fork bomb)")
    output_limit_bytes: int = Field(default=1024 * 1024, ge=1024, description="output kept per command (head and tail)")
    exec_timeout_sec: float = Field(
        default=600.0, gt=0, description="a command with no timeout of its own is killed after this"
    )
    label: str = Field(default="envqa", description="Docker label on every container, image and network qa makes")

    def resolved_image_map(self) -> dict[str, str]:
        if not self.image_map_enabled:
            return {}
        return {k: v.replace("{base}", self.base_image) for k, v in self.image_map.items()}


class ValidateSettings(Section):
    oracle_runs: int | None = Field(default=None, ge=1, description="validation's override of `oracle_runs`")
    nop_runs: int = Field(default=1, ge=1, description="runs of the agent that does nothing (each must fail)")
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
        concurrency=4,
        max_attempts=3,
        backoff_base_sec=2.0,
        backoff_max_sec=120.0,
        jitter=0.5,
        park_default_sec=30.0,
        max_parks=200,
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
    workers: int = Field(default=2, ge=1, description="worker processes embedded mode starts")
    lease_ttl_sec: float = Field(default=30.0, gt=0, description="a dead worker's slot comes back after this")
    poll_interval_sec: float = Field(default=0.05, gt=0, description="idle worker's wait between claims")
    job_timeout_sec: int = Field(default=7200, ge=1, description="rq's timeout for one job (then `job_timeout`)")
    # liveness (issue 8): a worker whose loop keeps failing stops instead of spinning; a run stops waiting
    max_restarts: int = Field(default=5, ge=0, description="worker loop restarts allowed within restart_window_sec")
    restart_window_sec: float = Field(default=60.0, gt=0, description="the window max_restarts counts in")
    restart_backoff_sec: float = Field(default=0.2, ge=0, description="first restart delay; doubles, capped at 5 s")
    stall_timeout_sec: float = Field(
        default=600.0,
        ge=0,
        description="Redis mode: exit 3 when a queue holds "
        "work this long with no live worker claiming from it (0: wait forever)",
    )
    defaults: QueueSettings = Field(default_factory=builtin_queue_defaults)
    sandbox: QueueSettings = Field(default_factory=lambda: QueueSettings(concurrency=2))
    analysis: QueueSettings = Field(default_factory=QueueSettings)
    models: dict[str, QueueSettings] = Field(
        default_factory=dict, description="per-model queue settings, by normalised provider/model"
    )


class SweepSettings(Section):
    """Solver trials per model (issue 4). No models: no sweep, no API key needed.

    With `adaptive` on, `trials` is ignored: each model runs batches until the Bayesian stopping rule
    (core/stats.py StopRule) finds another batch dearer than the chance of a wrong band call, or n_max.
    """

    models: list[str] = Field(default_factory=list, description="solver models (provider/model); `-m` adds")
    trials: int = Field(default=5, ge=1, description="trials per model (fixed sweep)")
    adaptive: bool = Field(default=False, description="Bayesian sequential stopping instead of a fixed count")
    n_min: int = Field(default=3, ge=1, description="adaptive: trials per model before it may stop")
    n_max: int = Field(default=90, ge=1, description="adaptive: trials per model at most")
    # 2 keeps two trials of a model in flight while spending <= 40% of a fixed n=30 sweep (benchmarks/adaptive.py).
    batch: int = Field(default=2, ge=1, description="trials per model scheduled between two checks")
    band_low: float = Field(default=0.10, ge=0, le=1, description="target band's lower pass@1")
    band_high: float = Field(default=0.30, ge=0, le=1, description="target band's upper pass@1")
    # chosen on benchmarks/adaptive.py's tuning seeds (never on the seeds it scores)
    stop_trial_cost: float = Field(
        default=0.0055,
        gt=0,
        lt=1,
        description="price of one trial, in units of a wrong band call: lower spends more trials for fewer wrong calls",
    )
    stop_prior: float = Field(default=0.5, gt=0, description="Beta(prior, prior) prior on a model's pass rate")
    report_confidence: float = Field(default=0.95, gt=0, lt=1, description="Wilson level of reported CIs")
    pass_k: list[int] = Field(default_factory=lambda: [1, 5], description="k values of the unbiased pass@k reported")
    trials_from: list[str] = Field(
        default_factory=list,
        description="Harbor job or `tb run` folders whose "
        "trials join the sweep as imported trials, matched by task name (--trials-from)",
    )
    count_stale: bool = Field(
        default=False,
        description="count imported trials that ran another version of the "
        "task (their recorded checksum differs) in the sweep (--count-stale)",
    )


class ProviderEndpoint(Section):
    """One model provider. `kind` picks the SDK; the key is read from `api_key_env`, never from config."""

    kind: str = Field(pattern="^(anthropic|openai|openai-compatible)$", description="which SDK speaks to it")
    base_url: str | None = Field(default=None, description="API base URL (OpenAI-style: with /v1)")
    base_url_env: str | None = Field(default=None, description="environment variable that may give the base URL")
    api_key_env: str | None = Field(default=None, description="environment variable holding the API key")
    timeout_sec: float = Field(default=120.0, gt=0, description="one request's timeout")
    transient_retries: int = Field(default=2, ge=0, description="our retries of 5xx/connection errors")


def default_providers() -> dict[str, ProviderEndpoint]:
    return {
        "anthropic": ProviderEndpoint(
            kind="anthropic", api_key_env="ANTHROPIC_API_KEY", base_url_env="ANTHROPIC_BASE_URL"
        ),
        "openai": ProviderEndpoint(kind="openai", api_key_env="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL"),
    }


class Price(Section):
    """USD per million tokens."""

    input_per_mtok: float = Field(ge=0, description="USD per million input tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")
    cached_input_per_mtok: float | None = Field(default=None, ge=0, description="USD per million cached input tokens")


def default_prices() -> dict[str, Price]:
    table = {  # list prices (USD / Mtok); override or extend with [prices."provider/model"] in qa.toml
        "anthropic/claude-sonnet-4-5": (3.0, 15.0, 0.30),
        "anthropic/claude-opus-4-1": (15.0, 75.0, 1.50),
        "anthropic/claude-haiku-4-5": (1.0, 5.0, 0.10),
        "openai/gpt-5": (1.25, 10.0, 0.125),
        "openai/gpt-5-mini": (0.25, 2.0, 0.025),
        "openai/gpt-4.1": (2.0, 8.0, 0.50),
    }
    return {k: Price(input_per_mtok=i, output_per_mtok=o, cached_input_per_mtok=c) for k, (i, o, c) in table.items()}


class BudgetSettings(Section):
    """Caps for one run's model work; reaching one stops new trials (running ones finish) and says so."""

    max_usd: float | None = Field(default=None, ge=0, description="USD over the whole run, every model role")
    max_tokens: int | None = Field(default=None, ge=0, description="tokens over the whole run, every model role")
    max_trials: int | None = Field(default=None, ge=0, description="model trials over the whole run")


class SolverSettings(Section):
    """The solver's loop limits. Wall time comes from task.toml [agent].timeout_sec."""

    max_steps: int = Field(default=40, ge=1, description="model turns per trial")
    max_tokens_per_trial: int = Field(default=2_000_000, ge=1, description="tokens per trial, then it stops")
    max_output_tokens: int = Field(default=4096, ge=16, description="per model call")
    command_timeout_sec: float = Field(default=120.0, gt=0, description="one bash command's timeout")
    observation_chars: int = Field(default=10_000, ge=200, description="a command's output kept for the model")
    temperature: float | None = Field(default=None, description="sampling temperature; unset: the provider's")
    structured_retries: int = Field(default=2, ge=0, description="re-asks after an invalid structured answer")
    # How the model acts (issue 26): "tools" = native tool calls; "text" = one fenced bash block per reply
    # (mini-swe-agent style), for served checkpoints without a tool-call parser. `model_actions` overrides it
    # per model spec, e.g. [solver.model_actions] "openai-compatible/qwen@http://127.0.0.1:8000/v1" = "text".
    actions: Literal["tools", "text"] = Field(
        default="tools",
        description="tools: native tool calls; text: one fenced bash block per reply (mini-swe-agent style)",
    )
    model_actions: dict[str, Literal["tools", "text"]] = Field(
        default_factory=dict, description="`actions` per model spec (wins over `actions`)"
    )

    def actions_for(self, model: str | None) -> str:
        return self.model_actions.get(model or "", self.actions)


class ProbeSettings(Section):
    """The shortcut hunter's deterministic probes (issue 5): which run, and how hard they try."""

    # Probes run by the hunt node, in order (see envqa.probes.base; `qa run` with no model runs these).
    enabled: list[str] = Field(
        default_factory=lambda: [
            "static",
            "oracle_runs",
            "exploits",
            "solver_passes",
            "oracle_state",
            "egress",
            "nop_cause",
        ],
        description="probes the hunt runs, in order",
    )
    # Exploit agents to run as trials; names from the exploit registry (core/registry/exploits.py).
    exploits: list[str] = Field(
        default_factory=lambda: list(DEFAULT_EXPLOITS),
        description="scripted exploits to run (names from core/registry/exploits.py)",
    )
    # Well-known hosts the network-fetch exploit asks for answers (besides hosts the instruction names); it
    # runs only where the task's network is open and an open network exists (egress_network / fake internet).
    answer_hosts: list[str] = Field(
        default_factory=lambda: ["raw.githubusercontent.com", "gist.githubusercontent.com", "pastebin.com"],
        description="hosts the network-fetch exploit asks for answers, besides those the instruction names",
    )
    # Oracle runs the hunt wants in all (issue 5: oracle x k); validation's runs count towards k. Unset: the
    # top-level `oracle_runs`, at least HUNT_MIN_ORACLE_RUNS (QAConfig.oracle_runs_for).
    oracle_runs: int | None = Field(
        default=None,
        ge=1,
        description="oracle runs the hunt wants in all; unset: the top-level `oracle_runs`, at least 5",
    )
    # Suspicious sweep passes (see envqa.probes.solver_passes) replayed under strace, at most this many.
    solver_replays: int = Field(default=3, ge=0, description="suspicious sweep passes replayed under strace")
    # Attacks on the harness itself (a conftest.py in / or /tests, sitecustomize.py, PATH shims): they beat
    # every verifier that runs pytest in the agent's container, so they say nothing about one environment.
    harness_exploits: bool = Field(
        default=False,
        description="also plant /conftest.py, sitecustomize.py and PATH "
        "shims (beat every in-container pytest verifier)",
    )
    strace: bool = Field(default=True, description="trace exploit and replay trials with host strace")
    verifier_reruns: int = Field(default=2, ge=0, description="verifier re-runs on the oracle's end state")
    max_mutated_files: int = Field(default=6, ge=0, description="oracle output files mutation testing damages")
    max_variants: int = Field(
        default=6,
        ge=0,
        description="verifier runs the variation probe may spend on the "
        "oracle's end state (right answers the verifier must accept); 0 turns it off",
    )
    # Egress: the "open" network for the rerun that has network. Empty: a fake internet container on an
    # internal network serving `fake_internet_dir` under `fake_internet_hosts`, when that dir is set;
    # otherwise the egress probe is skipped (there is no internet to compare against).
    egress_network: str = Field(default="", description="the open Docker network for the egress re-run")
    fake_internet_dir: Path | None = Field(
        default=None,
        description="files a fake internet serves when no egress_network is set (neither: the egress probe is skipped)",
    )
    fake_internet_hosts: list[str] = Field(default_factory=list, description="host names the fake internet answers to")
    # Opt-in static rules (noisy on purpose for most tasks).
    lint_root_agent: bool = Field(default=False, description="opt-in rule root-agent (`qa lint --strict`)")
    lint_unpinned_base: bool = Field(default=False, description="opt-in rule unpinned-base-image (`qa lint --strict`)")


class ReviserSettings(Section):
    """The reviser (issue 9): which model writes patches the fixers cannot, and how hard the gate checks them."""

    model: str | None = Field(default=None, description="provider/model; none = mechanical fixers only")
    max_repairs: int = Field(default=2, ge=0, description="reviser retries after a failed gate")
    max_output_tokens: int = Field(default=8192, ge=256, description="per reviser call")
    gate_oracle_runs: int | None = Field(
        default=None, ge=1, description="oracle runs the gate needs to all pass; unset: the top-level `oracle_runs`"
    )
    gate_replays: int | None = Field(
        default=None,
        ge=0,
        description="legitimate solver passes the gate regrades: every one (unset, the default) or at most this many",
    )
    separate_verifier: Literal["off", "fallback", "prefer"] = Field(
        default="fallback",
        description="the separate-verifier conversion (agents/fixers/separate.py) for in-container "
        "tampering: fallback = when the in-place fixers decline or their proposal fails the gate; prefer = first",
    )


class GeneratorSettings(Section):
    """The generator (issue 13): the model that writes a Harbor task from spec.md, and its repair loop."""

    model: str | None = Field(default=None, description="provider/model; none = `qa new` scaffolds only")
    max_repairs: int = Field(default=2, ge=0, description="further attempts after a failed build/oracle/nop/lint")
    oracle_runs: int | None = Field(
        default=None,
        ge=1,
        description="oracle runs (smoke's one included) that must all pass; unset: the top-level `oracle_runs`",
    )
    max_output_tokens: int = Field(default=16384, ge=256, description="per generator call")


def _default_notify() -> list[Literal["approval", "findings", "incomplete", "clean"]]:
    return ["approval", "findings", "incomplete"]


class SlackSettings(Section):
    """Slack review of proposed revisions (issue 15). The bot token and signing secret come only from the
    environment (SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET), never from this file. No channel: Slack is off."""

    channel: str | None = Field(default=None, description="channel id (C...) or name the bot posts to")
    approvers: list[str] = Field(
        default_factory=list, description="Slack user ids (U.../W...) and user group ids (S...)"
    )
    # "approval": the checkpoint message and its thread (gate, adopted, finished, budget stop);
    # "findings" / "incomplete" / "clean": also post runs that end that way without a checkpoint.
    notify: list[Literal["approval", "findings", "incomplete", "clean"]] = Field(
        default_factory=_default_notify,
        description="what is posted: approval checkpoints, and runs ending with findings, incomplete or clean",
    )
    report_base_url: str | None = Field(default=None, description="where `qa serve` is reachable, for report links")
    api_base_url: str = Field(default="https://slack.com/api/", description="Web API base (a fake in tests)")
    send_budget_sec: float = Field(default=20.0, gt=0, description="one message's retries stop after this")
    flush_timeout_sec: float = Field(default=30.0, ge=0, description="a run's end waits this long for Slack")


class AnalystSettings(Section):
    """The trace analyst (issue 11): the model that labels what the rules could not, and the roll-up rule."""

    model: str | None = Field(default=None, description="provider/model; none = deterministic labels only")
    min_agreeing: int = Field(default=3, ge=1, description="trials (across >= 2 models) a label needs to be the task's")
    trajectory_tokens: int = Field(default=6000, ge=500, description="budget for the compressed trajectory")
    max_output_tokens: int = Field(default=2048, ge=256, description="per analyst call")
    wait_sec: float = Field(default=1800.0, gt=0, description="how long the graph waits for queued analyst jobs")


class HunterSettings(Section):
    """The LLM shortcut hunter (issue 11): a red-team solver that tries to earn reward without the task."""

    model: str | None = Field(default=None, description="provider/model; none = scripted exploits only")
    trials: int = Field(default=2, ge=0, description="hunter trials per version")


class LoopSettings(Section):
    """The revise loop (issue 10): caps that end it, and how a revision is approved.

    approval: "prompt" (ask on the terminal), "wait" (stop with exit 4; `qa approve|reject RUN_ID` later),
    "auto" (adopt gated proposals unasked, recorded as auto-approved); unset: prompt on a TTY, else wait.
    """

    max_iterations: int = Field(default=3, ge=0, description="revisions adopted before the loop stops")
    max_wall_sec: float | None = Field(default=None, gt=0, description="wall time of the whole run")
    approval: str | None = Field(
        default=None,
        pattern="^(prompt|wait|auto)$",
        description="how a gated proposal is approved; unset: prompt on a terminal, else wait",
    )


class QAConfig(Section):
    home: Path = Field(
        default_factory=lambda: Path(os.environ.get("QA_HOME", ".qa")),
        description="where runs, the store and versions live",
        json_schema_extra={"doc_default": '`$QA_HOME`, else `".qa"`'},
    )
    # THE number of oracle runs (`--oracle-runs`): validation, the hunt, the gate and the generator each use it
    # unless their own key (`[validate] oracle_runs`, `[probes] oracle_runs`, `[reviser] gate_oracle_runs`,
    # `[generator] oracle_runs`, the settings of earlier releases) is set. Read it through oracle_runs_for.
    oracle_runs: int = Field(default=3, ge=1, description="oracle runs each stage wants; a stage's key overrides")
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
