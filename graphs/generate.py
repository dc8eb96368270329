"""Build-and-repair: from spec.md to a task that builds, whose oracle passes and whose nop fails.

Each attempt's file set (agents/generator.py) is written to a staging directory under QA_HOME and
checked the way the QA loop would: a smoke step first (build, one oracle run, one nop run; the circuit
breaker before the expensive part), then the remaining oracle runs and the structural lint. The first
failure (build log tail, oracle verifier output, nop passing, lint findings) goes back to the model, up to
`[generator] max_repairs` more times. Only a task that passes everything is moved to its destination, in
one rename; a task that never passes leaves no directory, only the report of every attempt.

`generate_node` is the run graph's first node when the input directory holds only spec.md: the accepted
task becomes the `env_dir` that `load` snapshots as version 1 (author model:<generator>, the spec kept in
task.toml's [metadata]).
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import structlog
from pydantic import BaseModel, Field

from envqa.agents.generator import GeneratedTask, ask_generator, build_prompt, embed_spec, read_spec, write_file_set
from envqa.agents.structured import is_invalid_answer
from envqa.core.defaults import GENERATE_LOG_TAIL as TAIL
from envqa.core.environment import load_environment
from envqa.core.errors import EnvQAError, InfraError, PatchError
from envqa.core.layout import RunLayout
from envqa.core.models import Outcome, TrialResult, TrialSpec
from envqa.core.run_deps import RunDeps
from envqa.core.sandbox import ImageBuildError
from envqa.probes.static.findings import static_findings
from envqa.probes.static.lint import lint_structure

log = structlog.get_logger(__name__)
# How far an attempt got, in the order the checks run (the yield table counts variants per level).
LEVELS = ["refused", "generated", "built", "oracle passes", "nop fails", "accepted"]


class Attempt(BaseModel):
    attempt: int
    stage: str = Field(
        description="the step that failed (invalid-answer, refused, load, build, oracle, nop, lint) or 'passed'"
    )
    reached: str = Field(description="the furthest level passed, one of LEVELS")
    detail: str = ""
    files: list[str] = Field(default_factory=list)
    notes: str = ""
    trial_ids: list[str] = Field(default_factory=list)
    spend: dict = Field(default_factory=dict)


class Generation(BaseModel):
    spec_dir: str
    model: str
    variant: int = 0
    passed: bool = False
    task_dir: str | None = None
    version: str | None = None
    attempts: list[Attempt] = Field(default_factory=list)

    @property
    def reached(self) -> str:
        return max((a.reached for a in self.attempts), key=LEVELS.index, default="refused")


def _tail(text: str, n: int = TAIL) -> str:
    return text if len(text) <= n else "...\n" + text[-n:]


def _trial_output(r: TrialResult) -> str:
    """What a failing trial shows: its error, the verifier's stdout and the agent's logs (tails)."""
    parts = [
        f"{r.agent} trial: outcome {r.outcome.value}, reward {r.reward}"
        + (f", {r.error_class}: {r.error_message}" if r.error_class else "")
    ]
    root = Path(r.artifacts_dir) if r.artifacts_dir else None
    for sub in ("verifier", "agent"):
        for p in sorted((root / sub).glob("*.txt")) if root and (root / sub).is_dir() else []:
            parts.append(f"--- {sub}/{p.name}\n{_tail(p.read_text(errors='replace'), 1500)}")
    return "\n".join(parts)


def check_task(deps: RunDeps, task_dir: Path, run_id: str, oracle_runs: int) -> Attempt:
    """The checks one attempt must pass, cheapest first; returns the first failure (or stage 'passed')."""
    try:
        env = load_environment(task_dir)
    except EnvQAError as e:
        return Attempt(attempt=0, stage="load", reached="generated", detail=str(e))
    try:
        tag, built = deps.backend.ensure_image(env)
    except ImageBuildError as e:
        return Attempt(attempt=0, stage="build", reached="generated", detail=f"{e}\n{_tail(e.log_tail)}")
    if built:
        deps.store.record_build(tag, env.version)

    def trials(agent: str, indices) -> list[TrialResult]:
        specs = [
            TrialSpec(run_id=run_id, env_version=env.version, agent=agent, index=i, purpose="generate") for i in indices
        ]
        return deps.executor.run(env, specs)

    smoke = trials("oracle", [0]) + trials("nop", [0])
    ids = [r.trial_id for r in smoke]
    oracle, nop = smoke
    if oracle.outcome != Outcome.PASS:
        return Attempt(
            attempt=0,
            stage="oracle",
            reached="built",
            trial_ids=ids,
            detail="solution/solve.sh did not earn reward 1:\n" + _trial_output(oracle),
        )
    if nop.outcome == Outcome.PASS:
        return Attempt(
            attempt=0,
            stage="nop",
            reached="oracle passes",
            trial_ids=ids,
            detail="an empty attempt (the agent does nothing) earned reward 1: the tests accept a task "
            "that was not done. Make tests/test.sh check the result and write 0 otherwise.",
        )
    if nop.outcome == Outcome.INFRA:
        return Attempt(
            attempt=0,
            stage="nop",
            reached="oracle passes",
            trial_ids=ids,
            detail="the empty attempt did not get a reward (the verifier must write one on every "
            "path):\n" + _trial_output(nop),
        )
    more = trials("oracle", range(1, oracle_runs))
    ids += [r.trial_id for r in more]
    failed = [r for r in more if r.outcome != Outcome.PASS]
    if failed:
        return Attempt(
            attempt=0,
            stage="oracle",
            reached="nop fails",
            trial_ids=ids,
            detail=f"the oracle failed {len(failed)} of {oracle_runs} runs (it must pass every run):\n"
            + _trial_output(failed[0]),
        )
    s = deps.config.probes
    serious = [
        f
        for f in lint_structure(env) + static_findings(env, s.lint_root_agent, s.lint_unpinned_base)
        if f.severity != "info"
    ]
    if serious:
        return Attempt(
            attempt=0,
            stage="lint",
            reached="nop fails",
            trial_ids=ids,
            detail="lint findings:\n"
            + "\n".join(f"- {f.rule} ({f.severity}, {f.location or '-'}): {f.message}" for f in serious),
        )
    return Attempt(attempt=0, stage="passed", reached="accepted", trial_ids=ids)


def generate_task(deps: RunDeps, spec_dir: Path, dest: Path, *, key: str | None = None, variant: int = 0) -> Generation:
    """Generate, check and repair until a task passes or the repairs run out; move it to `dest` if it passes."""
    cfg = deps.config
    spec = read_spec(spec_dir)
    key = key or "gen-" + uuid.uuid4().hex[:10]
    prompt = build_prompt(spec, variant)
    staging = cfg.home / "generate" / key
    result = Generation(spec_dir=str(spec.root), model=cfg.generator.model or "", variant=variant)
    failed: list[tuple[dict, int, str, str]] = []
    try:
        for attempt in range(1, cfg.generator.max_repairs + 2):
            try:
                answer, spend = ask_generator(cfg, deps.executor, key=key, prompt=prompt, failed=failed)
            except InfraError as e:  # no valid file set after the repair prompts: nothing is written
                if not is_invalid_answer(e):
                    raise
                result.attempts.append(
                    Attempt(
                        attempt=attempt,
                        stage="invalid-answer",
                        reached="refused",
                        detail=f"the model gave no valid answer: {str(e)[:1000]}",
                    )
                )
                log.info("generator.attempt", key=key, attempt=attempt, stage="invalid-answer", reached="refused")
                return result  # the same call again would ask the same question: the attempt's reason ends it
            checked = _try(
                deps, answer, staging / f"attempt-{attempt}", spec.text, key, cfg.oracle_runs_for("generate")
            )
            checked = checked.model_copy(
                update={
                    "attempt": attempt,
                    "files": [f.path for f in answer.files],
                    "notes": answer.notes,
                    "spend": spend,
                }
            )
            result.attempts.append(checked)
            log.info("generator.attempt", key=key, attempt=attempt, stage=checked.stage, reached=checked.reached)
            if checked.stage == "passed":
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(staging / f"attempt-{attempt}"), str(dest))  # one rename: never half a task
                result.passed, result.task_dir = True, str(dest)
                result.version = load_environment(dest).version
                return result
            failed.append((answer.model_dump(mode="json"), attempt, checked.stage, checked.detail))
        return result
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _try(deps: RunDeps, answer: GeneratedTask, where: Path, spec_text: str, key: str, oracle_runs: int) -> Attempt:
    shutil.rmtree(where, ignore_errors=True)
    try:
        write_file_set(answer, where)
    except PatchError as e:
        return Attempt(attempt=0, stage="refused", reached="refused", detail=str(e))
    if (where / "task.toml").exists():
        embed_spec(where, spec_text)
    return check_task(deps, where, key, oracle_runs)  # trial ids carry the version: attempts never collide


def generate_node(deps: RunDeps, state) -> dict:
    """Graph node: generate from state["env_dir"] (spec.md); the accepted task becomes the directory `load`
    snapshots. A generation that never passes ends the run: its report lists every attempt, exit 1."""
    run_id = state["run_id"]
    dest = deps.config.home / "generated" / run_id / Path(state["env_dir"]).name  # the task keeps the spec's name
    record = dest.parent / "generation.json"
    if dest.exists() and record.exists():  # resumed after generation finished but before load: reuse it
        return {"env_dir": str(dest), "spec_dir": state["env_dir"], "generation": json.loads(record.read_text())}
    shutil.rmtree(dest, ignore_errors=True)  # a crash between the move and the record: generate again
    gen = generate_task(deps, Path(state["env_dir"]), dest, key=f"gen-{run_id}")
    summary = gen.model_dump(mode="json")
    if gen.passed:
        record.write_text(json.dumps(summary))
        return {"env_dir": str(dest), "spec_dir": state["env_dir"], "generation": summary}
    last = gen.attempts[-1] if gen.attempts else None
    stop = f"generation_failed: {len(gen.attempts)} attempt(s), last failed at {last.stage if last else '-'}"
    body = {
        "run_id": run_id,
        "verdict": "findings",
        "stop_reason": stop,
        "generation": summary,
        "environment": {"dir": state["env_dir"], "name": None, "version": None},
        "findings": [],
        "trials": [],
    }
    deps.store.finish_run(run_id, "findings", body, [])
    report = deps.store.run_report(run_id)
    assert report is not None  # finish_run just saved it
    RunLayout(deps.config.runs_dir, run_id).write_report(report)  # export of the store's copy
    return {"generation": summary, "stop_reason": stop, "verdict": "findings"}


def route_after_generate(state) -> str:
    return "load" if (state.get("generation") or {}).get("passed", True) else "__end__"
