"""Domain models shared by every layer: trial specs and results, findings, labels.

These are the pydantic boundaries of DEVELOPERS.md: what a trial produced, what a probe found, and
what the report prints all round-trip through JSON unchanged (store/, RQ jobs, the graph state).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from envqa.core.registry import TRIAL_LABELS, Label, Severity, get_rule


def utcnow() -> datetime:
    return datetime.now(UTC)


class Outcome(StrEnum):
    """How a trial ended. `infra` never counts in a pass rate."""

    PASS = "pass"
    FAIL = "fail"
    INFRA = "infra"


class Phase(StrEnum):
    BUILD = "build"
    START = "start"
    AGENT = "agent"
    VERIFIER = "verifier"
    TEARDOWN = "teardown"


class TrialSpec(BaseModel):
    """Everything needed to run one trial; its id is derived, so re-enqueueing is idempotent."""

    run_id: str
    env_version: str
    agent: str
    model: str | None = None
    index: int = 0
    purpose: str = "validate"

    @property
    def trial_id(self) -> str:
        key = f"{self.run_id}|{self.env_version}|{self.purpose}|{self.agent}|{self.model}|{self.index}"
        return f"{self.agent}-{self.index}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


class PhaseTiming(BaseModel):
    phase: Phase
    started_at: datetime
    finished_at: datetime

    @property
    def seconds(self) -> float:
        return (self.finished_at - self.started_at).total_seconds()


class StepResult(BaseModel):
    """One [[steps]] entry of a multi-step trial (Harbor 0.26 `models/trial/result.py` StepResult, flattened).
    A step after the one that stopped the trial (min_reward, a failed setup, an infra error) is listed with
    `skipped` (Harbor leaves it out); it counts in no strategy. Default-empty in TrialResult, so a stored row
    written before steps existed still reads."""

    name: str
    outcome: Outcome | None = None  # None: skipped
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    skipped: bool = False
    stopped: str | None = None  # on the step that stopped the rest: why (e.g. "reward=0.0 below min_reward 1.0")
    error_class: str | None = None
    error_message: str | None = None
    agent_exit_code: int | None = None
    agent_timed_out: bool = False


class Provenance(BaseModel):
    """Where an imported trial came from (issue 33): the harness's own record of it. `stale`: the harness ran
    another version of the task (its recorded checksum differs from the task on disk); such a trial is kept
    and shown, and counts in the current version's sweep only when the user says so (--count-stale)."""

    format: str  # "harbor" | "terminal-bench"
    path: str  # the trial's folder as read
    trial_name: str
    job_name: str = ""
    task_name: str
    agent: str  # the harness's agent name (TrialResult.agent is "solver"; TrialResult.model is agent/model)
    model: str | None = None
    task_checksum: str | None = None
    stale: bool = False


class TrialResult(BaseModel):
    """The stored record of one trial: its store row's result_json (result.json on disk is an export)."""

    trial_id: str
    run_id: str
    env_version: str
    agent: str
    model: str | None = None
    purpose: str = "validate"
    outcome: Outcome
    reward: float | None = None
    rewards: dict[str, float] = Field(default_factory=dict)
    error_class: str | None = None
    error_message: str | None = None
    agent_exit_code: int | None = None
    agent_timed_out: bool = False
    timings: list[PhaseTiming] = Field(default_factory=list)
    step_results: list[StepResult] = Field(default_factory=list)  # [[steps]] tasks: one per step, in order
    artifacts_dir: str | None = None
    source: Literal["qa", "imported"] = "qa"  # imported: another harness ran it (issue 33); see provenance
    provenance: Provenance | None = None
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime = Field(default_factory=utcnow)

    def timing(self, phase: Phase) -> float | None:
        return next((t.seconds for t in self.timings if t.phase == phase), None)


STORED = {"stored": True}  # validation context for records read back from the store (see Finding)


class Finding(BaseModel):
    """One thing wrong with the environment, with the evidence that shows it.

    Its rule must be registered (core/registry/rules.py): a typo, or a rule without its registry row, fails
    where the finding is made, not later in the gate or the report. Only history read back from the store
    (validated with `context=STORED`) keeps any rule id, so a QA_HOME written by an older `qa` stays
    readable.
    """

    rule: str
    label: Label
    severity: Severity
    message: str
    evidence: list[str] = Field(default_factory=list)
    location: str | None = None
    # Every place, the first being `location`, when the finding groups repeats of its rule in one file
    # (core/finding_groups.py); empty for a finding at one place.
    locations: list[str] = Field(default_factory=list)
    fix: str | None = None
    trial_ids: list[str] = Field(default_factory=list)
    # The precise cause within the rule, when a probe could name it (nop-passes: empty-output-loop, ...); a
    # finding with a subtype supersedes the same rule's finding without one (graphs/loop_state.py).
    subtype: str | None = None

    @field_validator("rule")
    @classmethod
    def _registered(cls, rule: str, info: ValidationInfo) -> str:
        if not (info.context or {}).get("stored"):
            get_rule(rule)  # raises UnknownRule (a ValueError) naming the registry
        return rule

    @classmethod
    def of(
        cls,
        rule: str,
        message: str,
        *,
        severity: Severity | None = None,
        case: str | None = None,
        remedy_fields: dict[str, str] | None = None,
        **fields: Any,
    ) -> Finding:
        """A finding of a registered rule, its label, severity and fix taken from the rule's registry row, so no
        call site restates them. `severity` only where a finding is lower in context than the rule's most
        (the row's); the label and the fix are those of `case` (default: the finding's subtype) when the row has
        them, the fix filled with `remedy_fields` when the remedy is a template (`{want}`)."""
        if {"label", "fix"} & fields.keys():
            raise TypeError(f"Finding.of({rule!r}): label and fix come from the rule registry, not the call site")
        row = get_rule(rule)
        return cls(
            rule=rule,
            label=Label(row.label_for(case or fields.get("subtype"))),
            severity=severity or row.severity,
            message=message,
            fix=row.remedy_for(case or fields.get("subtype"), **(remedy_fields or {})),
            **fields,
        )

    def public(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class VersionInfo(BaseModel):
    """One immutable, content-addressed snapshot of an environment (store/versions.py)."""

    version: str
    parent: str | None = None
    patch: str | None = None
    author: str = "user"  # "user" | "fixer:<rule>" | "model:<provider/model>" | "human:<who>"
    reason: str = "loaded"
    name: str | None = None
    created_at: datetime = Field(default_factory=utcnow)


class GateCheck(BaseModel):
    name: str
    passed: bool
    detail: str = ""
    trial_ids: list[str] = Field(default_factory=list)


class GateResult(BaseModel):
    """The validation gate's verdict on a candidate version: every check, with the trials behind it."""

    passed: bool
    checks: list[GateCheck] = Field(default_factory=list)
    # Rules the parent fired that the proposal does not address and that still fire (or could not be re-checked):
    # they do not fail the gate (a correct fix for one rule is not dropped for another rule's open hole).
    still_open: list[str] = Field(default_factory=list)
    notice: str = ""  # said first wherever the gate is shown (e.g. "the reference solution fails: ...")

    def failures(self) -> list[GateCheck]:
        return [c for c in self.checks if not c.passed]


class SpecConsistency(BaseModel):
    """The reviser's own verdict on whether its revision keeps to the spec the task was generated from."""

    verdict: Literal["consistent", "contradicts"] = Field(
        description="consistent: the revision keeps every requirement of the spec; contradicts: it departs "
        "from one (a human then decides)"
    )
    spec_sentence: str = Field(default="", description="when contradicts: the spec sentence it departs from, quoted")
    explanation: str = Field(default="", description="one sentence: why")

    @model_validator(mode="after")
    def _names_the_sentence(self) -> SpecConsistency:
        if self.verdict == "contradicts" and not self.spec_sentence.strip():
            raise ValueError("a 'contradicts' verdict must quote the spec sentence in spec_sentence")
        return self


class SpecCheck(BaseModel):
    """Issue 13: a revision of a task generated from a spec, checked against that spec. Flagged when the
    reviser says it contradicts the spec or the deterministic check (probes/static/spec_consistency.py) finds a
    requirement or literal of the spec dropped; a flagged proposal waits for a human even in auto mode."""

    flagged: bool
    model: SpecConsistency | None = None  # the LLM reviser's verdict; None for fixers and human edits
    conflicts: list[str] = Field(default_factory=list)  # the deterministic check's findings, each naming the spec

    def reasons(self) -> list[str]:
        out = list(self.conflicts)
        if self.model is not None and self.model.verdict == "contradicts":
            out.insert(
                0,
                f'the reviser says it contradicts the spec: "{self.model.spec_sentence}"'
                + (f" ({self.model.explanation})" if self.model.explanation else ""),
            )
        return out


ProposalStatus = Literal["proposed", "gate_passed", "gate_failed", "dropped", "approved", "rejected", "adopted"]


class Proposal(BaseModel):
    """A candidate revision: a diff on a parent version, what it addresses and expects, and the gate's verdict."""

    proposal_id: str
    run_id: str
    parent_version: str
    candidate_version: str | None = None
    diff: str
    addresses: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    rationale: str = ""
    expected_effect: list[str] = Field(default_factory=list)
    author: str = "user"
    attempt: int = 1
    status: ProposalStatus = "proposed"
    gate: GateResult | None = None
    needs_model: list[str] = Field(default_factory=list)
    spend: dict = Field(default_factory=dict)  # the reviser call's Spend (tokens, USD): counts against the budget
    spec_check: SpecCheck | None = None  # None: the task has no spec (issue 13)
    created_at: datetime = Field(default_factory=utcnow)


class Citation(BaseModel):
    """One piece of evidence: an ATIF step id and a short quote from that step (checked by code), or a
    line of strace/probe output (`step_id` None) that deterministic labels cite."""

    step_id: int | None = None
    quote: str


class TrialLabel(BaseModel):
    """What one trial means (issue 11): a label from TRIAL_LABELS and a subtype from its taxonomy (both in
    core/registry/labels.py), and evidence. `source` says who decided: "deterministic" labels are never
    overridden by a model."""

    trial_id: str = ""
    label: str = Field(pattern="^(" + "|".join(TRIAL_LABELS) + ")$")
    subtype: str = ""
    confidence: float = Field(default=1.0, ge=0, le=1)
    explanation: str = ""
    evidence: list[Citation] = Field(default_factory=list)
    verified: bool = True
    source: str = "deterministic"

    def public(self) -> dict[str, Any]:
        """The report's `label` object for a trial."""
        return self.model_dump(mode="json", exclude={"trial_id"})
