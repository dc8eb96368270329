"""The generator: a Harbor task from spec.md, as a pydantic-validated file set confined to the task directory.

Two ways in. `scaffold_task` copies the blank template (generator_templates/blank, files rendered with
Jinja) and needs no model: that is `qa new`. `ask_generator` asks `[generator] model` for the whole file set
in structured output; the call runs as a job on the model's own queue (envqa.scheduler.calls, like the
reviser's), so concurrency, 429 parking and retries apply. A repair continues the same conversation: the
previous answer, then the failure (build log tail, oracle output, nop passing, lint finding) as the tool's
reply. `write_file_set` refuses any path outside the task's files before it writes anything.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jinja2
from pydantic import BaseModel, Field

from envqa.agents.structured import ANSWER_TOOL, structured_job
from envqa.core.config import QAConfig
from envqa.core.defaults import GENERATOR_MAX_SEED_CHARS as MAX_SEED_CHARS
from envqa.core.errors import InputError, PatchError
from envqa.core.executor import Call, Executor
from envqa.core.model_client import Message, ToolCall, client_for
from envqa.core.patches import confined_task_path
from envqa.prompts.render import render

TEMPLATES = Path(__file__).parent / "generator_templates"


class GeneratedFile(BaseModel):
    path: str = Field(description="path relative to the task directory, e.g. tests/test.sh")
    content: str = Field(description="the file's complete content")
    executable: bool = Field(default=False, description="true for scripts (solve.sh, test.sh)")


class GeneratedTask(BaseModel):
    files: list[GeneratedFile] = Field(
        description="every file of the task: instruction.md, task.toml, "
        "environment/Dockerfile, solution/solve.sh, tests/test.sh, and any others"
    )
    notes: str = Field(default="", description="one or two sentences on the design, for the report")


class GeneratorSpec(BaseModel):
    """A spec directory: spec.md and optional seed files under files/."""

    root: Path
    text: str
    seeds: list[tuple[str, str]] = Field(default_factory=list)


def is_spec_dir(path: Path | str) -> bool:
    root = Path(path)
    return (
        root.is_dir()
        and (root / "spec.md").is_file()
        and not (root / "task.toml").exists()
        and not (root / "task.yaml").exists()
    )


def read_spec(path: Path | str) -> GeneratorSpec:
    root = Path(path)
    spec = root / "spec.md"
    if not spec.is_file():
        raise InputError(str(spec), "missing: a generator input directory holds spec.md (and optional files/)")
    text = spec.read_text(encoding="utf-8", errors="replace")
    if not text.strip():
        raise InputError(str(spec), "empty: the generator would have nothing to write a task from")
    seeds = []
    files = root / "files"
    for p in sorted(files.rglob("*")) if files.is_dir() else []:
        if p.is_file():
            body = p.read_text(encoding="utf-8", errors="replace")
            seeds.append((p.relative_to(files).as_posix(), body[:MAX_SEED_CHARS]))
    return GeneratorSpec(root=root.resolve(), text=text, seeds=seeds)


def require_model(config: QAConfig, check_key: bool = True) -> str:
    """The generator model, or InputError (exit 2) naming the setting. `check_key=False` for `--detach`:
    the workers that run the graph hold the API key, not the enqueuing shell."""
    if not config.generator.model:
        raise InputError(
            "qa.toml",
            "no generator model: set [generator] model or pass --generator-model (e.g. anthropic/claude-sonnet-4-5)",
            "generator.model",
        )
    if check_key:
        client_for(config.generator.model, config)  # malformed spec / missing key: exit 2 before any work
    return config.generator.model


def confined_paths(answer: GeneratedTask) -> list[str]:
    """The answer's paths, normalised; PatchError naming every path outside the task's files."""
    paths, bad = [], []
    for f in answer.files:
        rel = confined_task_path(f.path)
        (paths if rel else bad).append(rel or f.path)
    if bad:
        raise PatchError(
            "generated file set",
            f"paths outside the task directory refused: {', '.join(bad)} "
            "(allowed: instruction.md, task.toml, environment/, tests/, solution/)",
        )
    return paths


def write_file_set(answer: GeneratedTask, dest: Path) -> Path:
    """Write the answer into an empty `dest`; checks every path before the first write."""
    paths = confined_paths(answer)
    dest.mkdir(parents=True, exist_ok=True)
    for rel, f in zip(paths, answer.files):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f.content)
        if f.executable or target.suffix == ".sh":
            target.chmod(0o755)
    return dest


def embed_spec(task_dir: Path, spec_text: str) -> None:
    """Keep the spec in task.toml's [metadata] (`spec`): it travels with every version, and the reviser,
    which reads task.toml, sees what the task was generated from. A JSON string is a valid TOML string."""
    toml = task_dir / "task.toml"
    lines = toml.read_text().splitlines()
    entry = "spec = " + json.dumps(spec_text, ensure_ascii=False)
    at = next((i for i, line in enumerate(lines) if line.strip() == "[metadata]"), None)
    if at is None:
        lines += ["", "[metadata]", entry]
    else:
        lines = [line for line in lines if not line.strip().startswith("spec =")]  # never two `spec` keys
        lines.insert(at + 1, entry)
    toml.write_text("\n".join(lines) + "\n")


def scaffold_task(name: str, dest: Path, author: str = "envqa", steps: int = 0) -> Path:
    """`qa new`: the blank template rendered into a new directory (no model). With `steps` N, a multi-step
    task as `harbor init --steps N` lays it out (harbor/cli/init.py): [[steps]] step-1..N in task.toml, each
    step's instruction.md, solution/ and tests/ under steps/<name>/, none at the root."""
    if dest.exists() and any(dest.iterdir()):
        raise InputError(str(dest), "exists and is not empty: `qa new` writes a new task directory")
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,  # noqa: S701 - task files, not HTML
    )
    blank = TEMPLATES / "blank"
    names = [f"step-{i}" for i in range(1, steps + 1)]
    # (template file, where it goes, what it asks): per step, its own file and line, so each verifier checks
    # its own step's work
    plan = [("task.toml", "task.toml", {}), ("environment/Dockerfile", "environment/Dockerfile", {})]
    for step in names or [None]:
        ask = (
            {"target": f"/app/{step}.txt", "line": f"hello from {name}, {step}"}
            if step
            else {"target": "/app/greeting.txt", "line": f"hello from {name}"}
        )
        for rel in ("instruction.md", "solution/solve.sh", "tests/test.sh"):
            plan.append((rel, f"steps/{step}/{rel}" if step else rel, ask))
    for rel, out, ask in plan:
        target = dest / out
        target.parent.mkdir(parents=True, exist_ok=True)
        text = (blank / rel).read_text()
        target.write_text(
            env.from_string(text).render(name=name, author=author, steps=names, **{"target": "", "line": "", **ask})
        )
        if target.suffix == ".sh":
            target.chmod(0o755)
    return dest


def build_prompt(spec: GeneratorSpec, variant: int = 0) -> str:
    return render("generator_instance.j2", spec=spec.text, seeds=spec.seeds, variant=variant)


def repair_history(prompt: str, failed: list[tuple[dict, int, str, str]]) -> list[Message]:
    """The conversation so far: the prompt, then per failed attempt its file set and why it failed (the
    tool's reply), so the model sees every earlier try, not only the last."""
    out = [Message(role="user", content=prompt)]
    for answer, attempt, stage, detail in failed:
        call = ToolCall(id=f"task-{attempt}", name=ANSWER_TOOL, arguments=answer)
        out += [
            Message(role="assistant", tool_calls=[call]),
            Message(
                role="tool",
                tool_call_id=call.id,
                content=render("generator_repair.j2", attempt=attempt, stage=stage, detail=detail),
            ),
        ]
    return out


def generate_job(args: dict) -> dict:
    """The job body (worker or in-process): one structured call; provider errors propagate to the policy."""
    return structured_job(args, render("generator_system.j2"), GeneratedTask, lambda c: c.generator.max_output_tokens)


def ask_generator(
    config: QAConfig, executor: Executor, *, key: str, prompt: str, failed: list[tuple[dict, int, str, str]] = ()
) -> tuple[GeneratedTask, dict]:
    """One attempt's file set, as a call on the generator model's queue (idempotent by its inputs).
    `failed`: (answer, attempt, stage, detail) of every earlier attempt, in order."""
    model = config.generator.model
    prior = repair_history(prompt, list(failed)) if failed else []
    args = {
        "config": config.model_dump(mode="json", by_alias=True),
        "model": model,
        "prompt": prompt,
        "prior": [m.model_dump(mode="json") for m in prior],
    }
    digest = hashlib.sha256(f"{key}|{model}|{json.dumps(args['prior'], sort_keys=True)}|{prompt}".encode())
    out = executor.run_call(
        Call(call_id=f"generate-{digest.hexdigest()[:16]}", model=model, func=f"{__name__}.generate_job", args=args)
    )
    return GeneratedTask.model_validate(out["answer"]), out.get("spend") or {}
