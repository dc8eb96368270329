"""The LLM reviser: whole-file edits for what the mechanical fixers cannot fix, in structured output.

It sees the task files, the findings with their evidence, the trace labels and sweep figures when they
exist, and (on a repair) its previous answer with the gate's reasons, as a continued conversation. The
call runs as a job on its model's queue (envqa.scheduler.calls), so the model's concurrency, 429
parking and retries apply, and its spend is returned for the budget. The answer becomes a diff against
the parent version; an edit outside the task's files is refused (PatchError) before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from envqa.agents.structured import ANSWER_TOOL, structured_job
from envqa.core.config import QAConfig
from envqa.core.defaults import REVISER_MAX_FILE_CHARS as MAX_FILE_CHARS
from envqa.core.environment import iter_files
from envqa.core.errors import PatchError
from envqa.core.executor import Call, Executor
from envqa.core.model_client import Message, ToolCall
from envqa.core.models import Finding, GateCheck, SpecConsistency
from envqa.core.patches import confined_task_path, make_diff
from envqa.prompts.render import render


class FileEdit(BaseModel):
    path: str = Field(description="path relative to the task directory, e.g. tests/test_outputs.py")
    content: str | None = Field(description="the complete new content of the file; null deletes it")


class RevisionAnswer(BaseModel):
    edits: list[FileEdit] = Field(description="whole-file edits; empty when nothing should change")
    addresses: list[str] = Field(
        default_factory=list,
        description=(
            "the finding rule ids this revision fixes; the gate requires exactly these to go silent (and nothing "
            "new to fire); rules you leave out may stay open. Empty: every finding"
        ),
    )
    rationale: str = Field(description="why these edits fix the findings without breaking correct solutions")
    expected_effect: list[str] = Field(
        default_factory=list, description='e.g. "exploit-reward-tamper fails", "nop still fails"'
    )


class SpecRevisionAnswer(RevisionAnswer):
    """The answer for a task generated from a spec (task.toml [metadata] spec): the verdict is required."""

    spec_consistency: SpecConsistency = Field(
        description="whether these edits keep every requirement of the "
        "task's spec; quote the spec sentence when they do not"
    )


def task_files(root: Path) -> list[tuple[str, str]]:
    out = []
    for p in iter_files(root):
        rel = p.relative_to(root).as_posix()
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            text = "(binary file)"
        out.append((rel, text if len(text) <= MAX_FILE_CHARS else text[:MAX_FILE_CHARS] + "\n... (truncated)"))
    return out


def build_prompt(
    root: Path, env_name: str, version: str, findings: list[Finding], *, labels=None, sweep=None, request=None
) -> str:
    return render(
        "reviser_instance.j2",
        env_name=env_name,
        version=version,
        findings=findings,
        request=request,
        labels=json.dumps(labels, indent=1)[:3000] if labels else "",
        sweep=json.dumps((sweep or {}).get("overall", sweep), indent=1)[:2000] if sweep else "",
        files=task_files(root),
    )


def repair_history(prompt: str, previous: dict, failures: list[GateCheck]) -> list[Message]:
    """The earlier exchange: the prompt, the rejected answer, and the gate's reasons as the tool's reply."""
    call = ToolCall(id="revision-1", name=ANSWER_TOOL, arguments=previous)
    return [
        Message(role="user", content=prompt),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id=call.id, content=render("reviser_repair.j2", failures=failures)),
    ]


def revise_job(args: dict) -> dict:
    """The job body (worker or in-process): one structured call; provider errors propagate to the policy.
    A task with a spec gets the schema whose `spec_consistency` is required."""
    schema = SpecRevisionAnswer if args.get("spec") else RevisionAnswer
    return structured_job(args, render("reviser_system.j2"), schema, lambda c: c.reviser.max_output_tokens)


def ask_reviser(
    config: QAConfig,
    executor: Executor,
    *,
    run_id: str,
    model: str,
    prompt: str,
    previous: dict | None = None,
    failures: list[GateCheck] | None = None,
    attempt: int = 1,
    spec: bool = False,
) -> tuple[RevisionAnswer, dict]:
    """One revision; `spec`: the task has a spec, so the answer must carry its `spec_consistency`."""
    prior = repair_history(prompt, previous, failures or []) if previous is not None else []
    key = hashlib.sha256(f"{run_id}|{model}|{attempt}|{prompt}|{json.dumps(previous, sort_keys=True)}".encode())
    args = {
        "config": config.model_dump(mode="json", by_alias=True),
        "model": model,
        "prompt": prompt,
        "prior": [m.model_dump(mode="json") for m in prior],
        "spec": spec,
    }
    out = executor.run_call(
        Call(call_id=f"revise-{key.hexdigest()[:16]}", model=model, func=f"{__name__}.revise_job", args=args)
    )
    schema = SpecRevisionAnswer if spec else RevisionAnswer
    return schema.model_validate(out["answer"]), out.get("spend") or {}


def answer_diff(parent_dir: Path, answer: RevisionAnswer, tb1: bool = False) -> str:
    """The answer's edits as a diff on the parent; PatchError for a path outside the task's files."""
    confined = [(e, confined_task_path(e.path, tb1)) for e in answer.edits]
    bad = [e.path for e, rel in confined if rel is None]
    if bad:
        raise PatchError(
            f"reviser answer on {parent_dir.name[:12]}",
            f"edits {', '.join(bad)}, outside the task's files (instruction.md, task.toml, "
            "environment/, tests/, solution/)",
        )
    with tempfile.TemporaryDirectory(prefix="envqa-revise-") as tmp:
        tree = Path(tmp) / "task"
        shutil.copytree(parent_dir, tree)
        for e, rel in confined:
            target = tree / rel
            if e.content is None:
                target.unlink(missing_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            existed = target.exists()
            target.write_text(e.content)
            if not existed and target.suffix == ".sh":
                target.chmod(0o755)
        return make_diff(parent_dir, tree)
