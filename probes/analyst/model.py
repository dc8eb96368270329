"""The trace analyst: one model call per trial, an answer whose citations code checks, one repair.

The model sees the instruction, the tests, the reference solution, the verifier's output, what the probes
found, and the trajectory compressed with its step ids kept (probes/analyst/trace_view.py). It answers through
the structured-output helper (a forced tool call validated by pydantic). Then code checks what pydantic
cannot: every cited step exists and the quote appears in it, the label fits the trial's outcome, the
subtype is in the taxonomy. Any problem is sent back once, in the same conversation; if the repaired
answer still fails (or is not valid at all), the first label is kept with `verified: false`. An answer that
never validates (plain text, arguments that are not JSON, a schema mismatch after the bounded retries of
structured_call) raises MalformedOutput: the call fails and the dispatch stores `unlabeled`/`analyst-failed`.

Each trial's analysis is one call on the analyst model's queue (an `Executor` call, like the reviser's and the
generator's): envqa.app.jobs.label_job is its body, run by a worker on any host (or in-process without Redis);
it reads the trial from the store and calls `analyze_trial` here.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import structlog
from pydantic import BaseModel, Field

from envqa.agents.structured import structured_call
from envqa.agents.trajectory import Trajectory
from envqa.core.defaults import ANALYST_FILE_CHARS as FILE_CHARS
from envqa.core.defaults import ANALYST_TRAJECTORY_TOKENS, STRUCTURED_RETRIES
from envqa.core.environment import Environment
from envqa.core.errors import MalformedOutput
from envqa.core.model_client import Message, ModelClient
from envqa.core.models import Citation, TrialLabel, TrialResult
from envqa.core.pricing import Spend
from envqa.core.task_model import tests_of
from envqa.probes.analyst.taxonomy import MODEL_TAXONOMY, labels_for_outcome, problems_with
from envqa.probes.analyst.trace_view import compress, step_text
from envqa.prompts.render import render

log = structlog.get_logger(__name__)


class AnalystCitation(BaseModel):
    step_id: int = Field(description="the [step N] number the quote comes from")
    quote: str = Field(min_length=3, max_length=300, description="a short verbatim excerpt of that step")


class AnalystAnswer(BaseModel):
    """What the analyst model must submit for one trial."""

    label: str = Field(description=" | ".join(MODEL_TAXONOMY))  # the label registry's model labels
    subtype: str = Field(description="one of the label's subtypes in the taxonomy")
    confidence: float = Field(ge=0, le=1)
    explanation: str = Field(min_length=10, max_length=2000)
    evidence: list[AnalystCitation] = Field(min_length=1, max_length=8)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def check_answer(answer: AnalystAnswer, trajectory: Trajectory | None, outcome: str) -> list[str]:
    """Problems code finds in an answer (empty: verified)."""
    problems = problems_with(answer.label, answer.subtype, outcome)
    steps = {s.step_id: _norm(step_text(s)) for s in (trajectory.steps if trajectory else [])}
    for c in answer.evidence:
        if c.step_id not in steps:
            problems.append(
                f"step {c.step_id} does not exist (the steps are {min(steps, default=0)}..{max(steps, default=0)})"
            )
        elif _norm(c.quote) not in steps[c.step_id]:
            problems.append(f"the quote {c.quote[:80]!r} does not appear in step {c.step_id}")
    return problems


def _read(path: Path, limit: int = FILE_CHARS) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return _cut(text, limit)


def _cut(text: str, limit: int = FILE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} chars cut]"


def _files(copies) -> list[dict]:
    out = []
    for c in copies:
        paths = [c.source] if c.source.is_file() else sorted(p for p in c.source.rglob("*") if p.is_file())
        out += [
            {"name": f"{c.target}/{p.relative_to(c.source)}" if c.source.is_dir() else c.target, "text": _read(p)}
            for p in paths[:8]
        ]
    return out


def _test_files(env: Environment) -> list[dict]:
    """The tests as `_files` shows the solution (the first 8 files of each copy, each cut to FILE_CHARS), from the
    test model: each file read once, through the guarded reader."""
    files = tests_of(env).files
    out = []
    for c in env.tests:
        mine = [f for f in files if f.copy_target == c.target and f.copy_source.is_dir() == c.source.is_dir()]
        out += [
            {
                "name": f"{c.target}/{f.in_tests.removeprefix('tests/')}" if c.source.is_dir() else c.target,
                "text": _cut(f.text),
            }
            for f in mine[:8]
        ]
    return out


def build_prompt(
    env: Environment, trial: TrialResult, trajectory: Trajectory | None, probe_evidence: list[str], token_budget: int
) -> str:
    verifier = _read(Path(trial.artifacts_dir or "") / "verifier" / "test-stdout.txt", 3000)
    transcript = compress(trajectory, token_budget) if trajectory else "(no trajectory was recorded)"
    return render(
        "analyst_instance.j2",
        instruction=env.instruction,
        tests=_test_files(env),
        solution=_files(env.solution),
        outcome=trial.outcome.value,
        reward=trial.reward,
        timed_out=trial.agent_timed_out,
        verifier_output=verifier or "(empty)",
        probe_evidence=probe_evidence,
        transcript=transcript,
        allowed_labels=labels_for_outcome(trial.outcome.value),
    )


def system_prompt() -> str:
    return render("analyst_system.j2", taxonomy=MODEL_TAXONOMY)


def _label(trial: TrialResult, answer: AnalystAnswer, spec: str, verified: bool, problems: list[str]) -> TrialLabel:
    explanation = answer.explanation
    if not verified:
        explanation += " [unverified: " + "; ".join(problems)[:500] + "]"
    label = answer.label if answer.label in labels_for_outcome(trial.outcome.value) else "unlabeled"
    return TrialLabel(
        trial_id=trial.trial_id,
        label=label,
        subtype=answer.subtype if label != "unlabeled" else "analyst-invalid",
        confidence=answer.confidence,
        explanation=explanation,
        evidence=[Citation(step_id=c.step_id, quote=c.quote) for c in answer.evidence],
        verified=verified,
        source=f"model:{spec}",
    )


def analyze_trial(
    client: ModelClient,
    env: Environment,
    trial: TrialResult,
    trajectory: Trajectory | None,
    probe_evidence: list[str],
    *,
    token_budget: int = ANALYST_TRAJECTORY_TOKENS,
    max_tokens: int = 2048,
    retries: int = STRUCTURED_RETRIES,
) -> tuple[TrialLabel, Spend]:
    """Label one trial with the model; raises envqa.core.errors.ProviderError (the queue's policy handles it)."""
    prompt = build_prompt(env, trial, trajectory, probe_evidence, token_budget)
    answer, result = structured_call(
        client, system_prompt(), prompt, AnalystAnswer, max_tokens=max_tokens, retries=retries
    )
    spend = result.spend
    problems = check_answer(answer, trajectory, trial.outcome.value)
    if problems:
        log.info("analyst.repair", trial=trial.trial_id, problems=problems[:5])
        repair = Message(
            role="tool", tool_call_id=result.call_id, content=render("analyst_repair.j2", problems=problems)
        )
        try:
            answer, result = structured_call(
                client,
                system_prompt(),
                "",
                AnalystAnswer,
                max_tokens=max_tokens,
                retries=retries,
                prior=[*result.transcript, repair],
            )
        except MalformedOutput as e:  # the repair was not even valid: the first answer stays, unverified
            log.info("analyst.repair_invalid", trial=trial.trial_id, error=str(e)[:300])
            return _label(
                trial, answer, client.spec, False, [*problems, f"the repaired answer was invalid ({e.error_class})"]
            ), spend
        spend = spend + result.spend
        problems = check_answer(answer, trajectory, trial.outcome.value)
    return _label(trial, answer, client.spec, not problems, problems), spend


class AnalystJob(BaseModel):
    """One trial's analysis, as the arguments of its call (JSON: it may run on another host)."""

    run_id: str
    trial_id: str
    env_dir: str  # the version's snapshot on the submitting host
    model: str
    probe_evidence: list[str] = []
    config: dict


def analyst_call_id(trial_id: str, model: str) -> str:
    return f"analyst-{trial_id}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"


def is_final(label: TrialLabel | None) -> bool:
    """A label no analyst job needs to (re)compute: the rules', a model's, or a recorded failure."""
    return label is not None and (label.source != "none" or label.subtype == "analyst-failed")
