"""The configuration of judging and revising: the probes, the reviser and its gate, the generator, the revise
loop and Slack review (`[probes]`, `[reviser]`, `[generator]`, `[loop]`, `[slack]`).

Part of envqa.core.config (which re-exports every name); defaults come from envqa.core.defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from envqa.core.config_runtime import Section
from envqa.core.defaults import (
    GENERATOR_MAX_OUTPUT_TOKENS,
    GENERATOR_MAX_REPAIRS,
    LOOP_MAX_ITERATIONS,
    PROBE_MAX_MUTATED_FILES,
    PROBE_MAX_VARIANTS,
    PROBE_SOLVER_REPLAYS,
    PROBE_VERIFIER_RERUNS,
    REVISER_MAX_OUTPUT_TOKENS,
    REVISER_MAX_REPAIRS,
    SLACK_FLUSH_TIMEOUT_SEC,
    SLACK_SEND_BUDGET_SEC,
)
from envqa.core.registry import DEFAULT_EXPLOITS, DEFAULT_PROBES


class ProbeSettings(Section):
    """The shortcut hunter's deterministic probes (issue 5): which run, and how hard they try."""

    # Probes run by the hunt node, in order (see envqa.probes.base; `qa run` with no model runs these): by default
    # the probe registry's `default` rows (core/registry/rules.py PROBES).
    enabled: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PROBES),
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
    solver_replays: int = Field(
        default=PROBE_SOLVER_REPLAYS, ge=0, description="suspicious sweep passes replayed under strace"
    )
    # Attacks on the harness itself (a conftest.py in / or /tests, sitecustomize.py, PATH shims): they beat
    # every verifier that runs pytest in the agent's container, so they say nothing about one environment.
    harness_exploits: bool = Field(
        default=False,
        description="also plant /conftest.py, sitecustomize.py and PATH "
        "shims (beat every in-container pytest verifier)",
    )
    strace: bool = Field(default=True, description="trace exploit and replay trials with host strace")
    verifier_reruns: int = Field(
        default=PROBE_VERIFIER_RERUNS, ge=0, description="verifier re-runs on the oracle's end state"
    )
    max_mutated_files: int = Field(
        default=PROBE_MAX_MUTATED_FILES, ge=0, description="oracle output files mutation testing damages"
    )
    max_variants: int = Field(
        default=PROBE_MAX_VARIANTS,
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
    max_repairs: int = Field(default=REVISER_MAX_REPAIRS, ge=0, description="reviser retries after a failed gate")
    max_output_tokens: int = Field(default=REVISER_MAX_OUTPUT_TOKENS, ge=256, description="per reviser call")
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
    max_repairs: int = Field(
        default=GENERATOR_MAX_REPAIRS, ge=0, description="further attempts after a failed build/oracle/nop/lint"
    )
    oracle_runs: int | None = Field(
        default=None,
        ge=1,
        description="oracle runs (smoke's one included) that must all pass; unset: the top-level `oracle_runs`",
    )
    max_output_tokens: int = Field(default=GENERATOR_MAX_OUTPUT_TOKENS, ge=256, description="per generator call")


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
    send_budget_sec: float = Field(
        default=SLACK_SEND_BUDGET_SEC, gt=0, description="one message's retries stop after this"
    )
    flush_timeout_sec: float = Field(
        default=SLACK_FLUSH_TIMEOUT_SEC, ge=0, description="a run's end waits this long for Slack"
    )


class LoopSettings(Section):
    """The revise loop (issue 10): caps that end it, and how a revision is approved.

    approval: "prompt" (ask on the terminal), "wait" (stop with exit 4; `qa approve|reject RUN_ID` later),
    "auto" (adopt gated proposals unasked, recorded as auto-approved); unset: prompt on a TTY, else wait.
    """

    max_iterations: int = Field(
        default=LOOP_MAX_ITERATIONS, ge=0, description="revisions adopted before the loop stops"
    )
    max_wall_sec: float | None = Field(default=None, gt=0, description="wall time of the whole run")
    approval: str | None = Field(
        default=None,
        pattern="^(prompt|wait|auto)$",
        description="how a gated proposal is approved; unset: prompt on a terminal, else wait",
    )
