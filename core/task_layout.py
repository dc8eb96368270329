"""Where a schema-1.4 task's extra files are: the steps of a multi-step task, and its compose services.

Follows harbor 0.26.0 `harbor/models/task/paths.py` (TaskPaths: `steps/<name>/instruction.md`, `solution/`,
`tests/`, `workdir/setup.sh`, scripts discovered `.sh` before `.bat`) and `task.py` (`_validate_tests`: a
step's instruction.md must exist; its test script may fall back to the task's `tests/`; a separate
verifier whose directory has a Dockerfile bundles its tests, so no test script is required there).
Differences: a step's paths are checked to stay inside the task with `Path.resolve` as Harbor does, and a
missing step directory or instruction is an InputError naming the file (exit 2), not FileNotFoundError.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel

from envqa.core.errors import InputError
from envqa.core.task_config import MAIN_SERVICE, StepConfig, TaskConfig, VerifierEnvironmentMode

COMPOSE_NAMES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")


class StepFiles(BaseModel):
    """One [[steps]] entry's files, resolved. `tests` is the step's tests/ or, when it has no test script,
    the task's (Harbor's fallback); None when a separate verifier bundles them."""

    name: str
    dir: Path
    instruction: Path
    solution: Path | None = None  # the step's solve.sh, when there is one
    tests: Path | None = None  # the directory uploaded to /tests for this step's verifier
    workdir: Path | None = None  # steps/<name>/workdir/: staged before the step runs
    setup: Path | None = None  # steps/<name>/workdir/setup.sh
    script: Path | None = None  # a milestone's own test script, run as /tests/test.sh (core/milestones.py)


def discover_script(directory: Path, stem: str) -> Path | None:
    """paths.py `discover_script`: `<stem>.sh`, else `<stem>.bat`."""
    for suffix in (".sh", ".bat"):
        p = directory / f"{stem}{suffix}"
        if p.is_file():
            return p
    return None


def _inside(root: Path, path: Path) -> Path:
    if not path.resolve().is_relative_to(root):
        raise InputError(str(path), "a step's files must stay inside the task (a symlink points outside it)")
    return path


def bundled_tests(config: TaskConfig, tests_dir: Path, step: StepConfig | None = None) -> bool:
    """verifier_mode.py `resolve_verifier_environment_definition`: a separate verifier with a docker_image,
    or whose tests directory has a Dockerfile/compose file, carries its tests in its own image."""
    if config.verifier_mode(step) != VerifierEnvironmentMode.SEPARATE:
        return False
    env = (step.verifier.environment if step else None) or config.verifier.environment
    return bool(env and env.docker_image) or any(
        (tests_dir / n).is_file() for n in ("Dockerfile", "docker-compose.yaml")
    )


def resolve_steps(root: Path, config: TaskConfig) -> list[StepFiles]:
    """Every step's files; a missing step directory or instruction.md is an error naming it."""
    out = []
    for step in config.steps or []:
        d = _inside(root, root / "steps" / step.name)
        if not d.is_dir():
            raise InputError(
                str(d), f"missing: [[steps]] {step.name!r} needs the directory steps/{step.name}/", "steps"
            )
        instruction = _inside(root, d / "instruction.md")
        if not instruction.is_file():
            raise InputError(str(instruction), f"missing: step {step.name!r} needs its instruction.md")
        solve = discover_script(d / "solution", "solve")
        tests = d / "tests"
        if not bundled_tests(config, tests, step) and discover_script(tests, "test") is None:
            tests = root / "tests"
            if discover_script(tests, "test") is None:
                raise InputError(
                    str(d / "tests" / "test.sh"),
                    f"missing: step {step.name!r} has no test script "
                    "(steps/<name>/tests/test.sh, or the task's tests/test.sh)",
                )
        workdir = d / "workdir"
        setup = workdir / "setup.sh"
        out.append(
            StepFiles(
                name=step.name,
                dir=d,
                instruction=instruction,
                solution=solve,
                tests=_inside(root, tests) if tests.is_dir() else None,
                workdir=workdir if workdir.is_dir() else None,
                setup=_inside(root, setup) if setup.is_file() else None,
            )
        )
    return out


def compose_services(build_context: Path) -> tuple[Path | None, list[str]]:
    """The first compose file under environment/ and its service names ([] when it does not parse: the
    static rule `compose-invalid` reports that)."""
    for name in COMPOSE_NAMES:
        path = build_context / name
        if path.is_file():
            try:
                doc = yaml.safe_load(path.read_text(errors="replace"))
            except yaml.YAMLError:
                return path, []
            services = doc.get("services") if isinstance(doc, dict) else None
            return path, sorted(str(s) for s in services) if isinstance(services, dict) else []
    return None, []


def sidecars(services: list[str]) -> list[str]:
    return [s for s in services if s != MAIN_SERVICE]
