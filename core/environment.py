"""Load an environment directory (Harbor, or Terminal-Bench 1 through an adapter) into one model.

Both formats end up as the same `Environment`: where the agent's image is built from, which files the
oracle and the verifier get (and where they go in the container), and how the verifier's verdict is
read. The version of an environment is the content hash of its files, so a changed test or Dockerfile
is a new version and an unchanged one is recognised across runs.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from enum import StrEnum
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envqa.core.defaults import ENV_CACHE_SIZE
from envqa.core.env_cache import ParseCache, rebased, symlinks_under
from envqa.core.errors import InputError
from envqa.core.input_files import InputFileError
from envqa.core.input_files import read_text as read_input_text
from envqa.core.milestones import find_milestones
from envqa.core.task_config import TaskConfig, TaskOS
from envqa.core.task_config_keys import ConfigWarning, unknown_keys
from envqa.core.task_layout import StepFiles, bundled_tests, compose_services, resolve_steps
from envqa.core.task_tree import check_task_tree
from envqa.core.tb1_parsers import TB1_PARSERS
from envqa.core.tb1_schema import tb1_unknown_keys

# Files that describe how envqa should judge an example, not part of the environment itself.
NOT_PART_OF_VERSION = {"qa-expected.json"}
IGNORED_DIRS = {".git", "__pycache__", ".pytest_cache", ".qa"}


class EnvFormat(StrEnum):
    HARBOR = "harbor"
    TB1 = "tb1"


class RewardSource(StrEnum):
    """Where the verifier's verdict is read: Harbor's reward files, or the verifier's output read by the
    Terminal-Bench parser the task.yaml names (core/tb1_parsers.py `TB1_PARSERS`, one member per parser)."""

    FILE = "file"  # /logs/verifier/reward.txt or reward.json (Harbor)
    PYTEST = "pytest"  # pytest's -rA summary or final counts
    SWEBENCH = "swebench"  # PASSED between the SWEBench markers
    SWELANCER = "swelancer"  # "swe lancer success" / "failure" / user_tool completed
    MLEBENCH = "mlebench"  # ALL TESTS PASSED between the MLEBench markers
    SWEPERF = "sweperf"  # PASSED between the SWE-Perf markers


class FileCopy(BaseModel):
    """One file or directory to copy from the host into the container."""

    source: Path
    target: str


class Environment(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    root: Path
    name: str
    format: EnvFormat
    instruction: str
    config: TaskConfig
    build_context: Path
    dockerfile: Path
    solution: list[FileCopy] = Field(default_factory=list)
    solution_command: str = "bash /solution/solve.sh"
    tests: list[FileCopy] = Field(default_factory=list)
    verifier_command: str = "bash /tests/test.sh"
    reward_source: RewardSource = RewardSource.FILE
    version: str
    warnings: list[ConfigWarning] = Field(default_factory=list)  # unknown task.toml/task.yaml keys (never an error)
    steps: list[StepFiles] = Field(default_factory=list)  # [[steps]]: a multi-step task's files
    milestones: list[StepFiles] = Field(default_factory=list)  # milestone_<n>.md parts (core/milestones.py)
    compose_file: Path | None = None
    compose_services: list[str] = Field(default_factory=list)

    @property
    def agent_timeout_sec(self) -> float:
        return self.config.agent.timeout_sec or 600.0

    def not_yet_run(self) -> list[InputError]:
        """What schema 1.4 declares that qa cannot run yet (issue 23's runtime is a later step). Running such
        a task as a shared single-step one would misjudge it (a sidecar the solution cannot reach is a false
        oracle-fails), so `qa run` refuses it; `qa lint` checks it."""
        later = "qa does not run this yet; running it any other way would misjudge the task (`qa lint` checks it)"
        toml, c = str(self.root / "task.toml"), self.config
        out = []
        if c.steps and c.has_separate_verifier():  # a single-step one runs (agents/verify_separate.py)
            out.append(InputError(toml, f"a separate verifier container for [[steps]]: {later}", "steps"))
        # compose services beside main run (sandbox/sidecars.py): no refusal
        if self.milestones:
            out.append(InputError(str(self.milestones[0].instruction), f"a milestone task: {later}", None))
        if c.environment.os == TaskOS.WINDOWS:
            out.append(InputError(toml, f'a Windows container (os = "windows"): {later}', "environment.os"))
        return out

    def for_step(self, step: StepFiles) -> Environment:
        """This task as one step sees it (its instruction, solution and tests), for the file rules."""
        return self.model_copy(
            update={
                "instruction": step.instruction.read_text(errors="replace"),
                "solution": [FileCopy(source=step.solution.parent, target="/solution")] if step.solution else [],
                "tests": ([FileCopy(source=step.tests, target="/tests")] if step.tests else [])
                + ([FileCopy(source=step.script, target="/tests/test.sh")] if step.script else []),
            }
        )


def _fail(path: Path, problem: str, field: str | None = None) -> InputError:
    return InputError(str(path), problem, field)


_UNION_TAGS = {"str", "int", "float", "bool", "list", "dict"}


def _field(loc: tuple) -> str | None:
    """`steps.0.min_reward`, without the union member names pydantic adds (`float`, `function-after[...]`)."""
    parts = [str(p) for p in loc if not (isinstance(p, str) and (p in _UNION_TAGS or "[" in p or "(" in p))]
    return ".".join(parts) or None


def _pydantic_error(path: Path, err: ValidationError) -> InputError:
    """The error to show: a validator's own message (value_error) over a union branch's type mismatch (the
    entry `{source = "../x"}` says "no '..'", not "should be a string")."""
    errors = err.errors()
    first = next((e for e in errors if e["type"] == "value_error"), None) or max(errors, key=lambda e: len(e["loc"]))
    field = _field(first["loc"])
    problem = first["msg"].removeprefix("Value error, ")
    if first["type"] != "missing" and not isinstance(first["input"], dict):
        problem = f"{problem} (got {first['input']!r})"
    more = len({_field(e["loc"]) for e in errors}) - 1
    if more:
        problem += f" (and {more} more problem{'s' if more > 1 else ''})"
    return _fail(path, problem, field)


def _read_text(path: Path, what: str) -> str:
    """The file's text through the guarded reader (a BOM and CRLF endings allowed; a folder, FIFO or file too
    large named as such)."""
    if not path.exists() and not path.is_symlink():
        raise _fail(path, f"missing: {what} is required")
    try:
        return read_input_text(path)
    except InputFileError as e:
        if e.message.startswith("not UTF-8"):
            raise _fail(path, f"{what} is not UTF-8 text") from None
        raise


def _require_file(path: Path, what: str) -> Path:
    if path.is_symlink() or not path.is_file():
        raise _fail(path, f"missing: {what} is required" if not path.exists() else f"{what} must be a regular file")
    return path


def _check_dockerfile(path: Path) -> None:
    text = _read_text(path, "the Dockerfile")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not lines or not any(ln.upper().startswith("FROM ") for ln in lines):
        raise _fail(path, "no FROM instruction: expected a Dockerfile starting with `FROM <image>`")


def content_hash(root: Path, only: list[Path] | None = None) -> str:
    """sha256 over relative paths, exec bits and bytes of every file under root (sorted)."""
    h = hashlib.sha256()
    for path in iter_files(root, only):
        rel = path.relative_to(root).as_posix()
        h.update(rel.encode() + b"\0")
        h.update(b"x" if os.access(path, os.X_OK) else b"-")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def iter_files(root: Path, only: list[Path] | None = None) -> list[Path]:
    bases = only if only is not None else [root]
    files: list[Path] = []
    for base in bases:
        if base.is_file():
            files.append(base)
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
            for name in filenames:
                p = Path(dirpath) / name
                if name in NOT_PART_OF_VERSION and p.parent == root:
                    continue
                files.append(p)
    return sorted(set(files), key=lambda p: p.relative_to(root).as_posix())


# Every environment parsed in this process, by content (core/env_cache.py): a version is parsed once.
PARSED: ParseCache[Environment] = ParseCache()


def load_environment(env_dir: str | Path, *, lint: bool = False, version: str | None = None) -> Environment:
    """Parse and check an environment directory; raises InputError naming the file and problem.

    A task that declares what qa cannot run yet (`Environment.not_yet_run`) is refused unless `lint`; with
    `lint`, an empty instruction.md loads too (`qa lint` reports it as a finding, with the others).

    Content already parsed in this process is not parsed again, wherever it lies (core/env_cache.py): the
    directory is hashed and the earlier parse moved to it. `version` is for an immutable snapshot named by its
    hash (store/versions.py): trusted, it spares hashing the files on every graph node."""
    root = _environment_root(env_dir)
    # A FIFO, a dangling symlink, a folder named like a file: named, exit 2. A trusted snapshot was checked when
    # it was first loaded, and every graph node loads it again.
    if version is None:
        check_task_tree(root, IGNORED_DIRS)
    env = _parsed_once(root, lint, version)
    refused = [] if lint or env.format != EnvFormat.HARBOR else env.not_yet_run()
    if refused:
        raise refused[0]
    return env


# Immutable snapshots already loaded in this process: (directory, version) -> Environment (`version_env`).
_SNAPSHOTS: dict[tuple[str, str], Environment] = {}
SNAPSHOT_PARENTS = ("envs", "envs-cache")  # QA_HOME/envs/<version> (store/versions.py), the shared host cache


def is_snapshot(env_dir: str | Path, version: str) -> bool:
    """Whether env_dir is the immutable snapshot of `version`: a folder named by the version under a version
    store (QA_HOME/envs/, or envs-cache/ on a host of a shared store). Its content is its name."""
    path = Path(env_dir)
    return path.name == version and path.parent.name in SNAPSHOT_PARENTS


def version_env(env_dir: str | Path, version: str) -> Environment:
    """The environment of `version` in env_dir, for the graph nodes and jobs that carry a version id. A snapshot
    (`is_snapshot`) is loaded once per process and never hashed; any other folder is loaded (hashed) each time,
    and the caller compares its version with the one it expects (the folder may have changed)."""
    if not is_snapshot(env_dir, version):
        return load_environment(env_dir)
    key = (str(Path(env_dir).resolve()), version)
    env = _SNAPSHOTS.get(key)
    if env is None:
        env = _SNAPSHOTS[key] = load_environment(env_dir, version=version)
        while len(_SNAPSHOTS) > ENV_CACHE_SIZE:
            _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)), None)
    return env


def _parsed_once(root: Path, lint: bool, version: str | None) -> Environment:
    try:
        key = (version or content_hash(root), symlinks_under(root, IGNORED_DIRS), lint)
    except OSError:  # an unreadable or dangling file: the parse reports it as it always did
        return _parse(root, lint)
    hit = PARSED.get(key)
    if hit is not None:
        return _moved(hit[1], hit[0], root)
    env = _parse(root, lint, None if version else key[0])
    PARSED.put((env.version, key[1], lint), root, env)  # a trusted version is checked here, on the first parse
    return env


def _moved(env: Environment, old: Path, new: Path) -> Environment:
    """`env`, parsed at `old`, as parsing the same content at `new` gives it: its paths, and what names them."""
    if old == new:
        return env
    moved = rebased(env, old, new)
    if env.format == EnvFormat.HARBOR:
        warnings = unknown_keys(env.config, str(new / "task.toml"))
    else:
        warnings = [w.model_copy(update={"file": str(new / "task.yaml")}) for w in env.warnings]
    return moved.model_copy(update={"name": _env_name(new, env.config, env.format), "warnings": warnings})


def _env_name(root: Path, config: TaskConfig, fmt: EnvFormat) -> str:
    return config.task.name if fmt == EnvFormat.HARBOR and config.task else root.name


def _parse(root: Path, lint: bool, version: str | None = None) -> Environment:
    if (root / "task.toml").exists():
        return _load_harbor(root, lint, version)
    return _load_tb1(root, version)


def _environment_root(env_dir: str | Path) -> Path:
    """The resolved directory, when it holds task.toml (Harbor) or task.yaml (Terminal-Bench 1)."""
    root = Path(env_dir)
    if not root.exists():
        raise _fail(root, "no such directory")
    if not root.is_dir():
        raise _fail(root, "not a directory: expected an environment directory")
    root = root.resolve()
    if (root / "task.toml").exists() or (root / "task.yaml").exists():
        return root
    if (root / "spec.md").exists():
        raise _fail(
            root / "spec.md",
            "a spec, not a task yet: `qa generate DIR` writes the task "
            "(or `qa run DIR` with [generator] model generates it first)",
        )
    raise _fail(root, "not an environment: expected task.toml (Harbor) or task.yaml (Terminal-Bench 1)")


def _load_harbor(root: Path, lint: bool, version: str | None = None) -> Environment:
    toml_path = root / "task.toml"
    try:
        raw = tomllib.loads(_read_text(toml_path, "task.toml"))
    except tomllib.TOMLDecodeError as e:
        raise _fail(toml_path, f"invalid TOML: {e}") from None
    except RecursionError:
        raise _fail(toml_path, "invalid TOML: nested deeper than the parser allows") from None
    try:
        config = TaskConfig.model_validate(raw)
    except ValidationError as e:
        raise _pydantic_error(toml_path, e) from None
    steps = resolve_steps(root, config)
    milestones = [] if steps else find_milestones(root)
    instruction = ""
    if milestones and not (root / "instruction.md").exists():  # each milestone's instruction is its own
        instruction = _read_text(milestones[0].instruction, milestones[0].instruction.name)
    elif not steps:  # a multi-step task's instructions are its steps' (Harbor: the root one is not read)
        instruction = _read_text(root / "instruction.md", "instruction.md")
        if not instruction.strip() and not lint:
            raise _fail(root / "instruction.md", "empty: the agent would have no instruction")
    dockerfile = _require_file(root / "environment" / "Dockerfile", "environment/Dockerfile")
    _check_dockerfile(dockerfile)
    solution: list[FileCopy] = []
    tests: list[FileCopy] = []
    if milestones:  # each milestone brings (or falls back to) its own scripts: none required at the root
        solution = [FileCopy(source=root / "solution", target="/solution")] if (root / "solution").is_dir() else []
        tests = [FileCopy(source=root / "tests", target="/tests")] if (root / "tests").is_dir() else []
    elif not steps:
        solve = _require_file(root / "solution" / "solve.sh", "solution/solve.sh (the reference solution)")
        solution = [FileCopy(source=solve.parent, target="/solution")]
        if not bundled_tests(config, root / "tests"):  # a separate verifier's image may carry its tests
            _require_file(root / "tests" / "test.sh", "tests/test.sh (the verifier)")
        tests = [FileCopy(source=root / "tests", target="/tests")]
    compose_file, services = compose_services(root / "environment")
    return Environment(
        root=root,
        name=_env_name(root, config, EnvFormat.HARBOR),
        format=EnvFormat.HARBOR,
        instruction=instruction,
        config=config,
        build_context=root / "environment",
        dockerfile=dockerfile,
        solution=solution,
        tests=tests,
        version=version or content_hash(root),
        warnings=unknown_keys(config, str(toml_path)),
        steps=steps,
        milestones=milestones,
        compose_file=compose_file,
        compose_services=services,
    )


def _load_tb1(root: Path, version: str | None = None) -> Environment:
    """Terminal-Bench 1: task.yaml, Dockerfile at the root, solution.sh, run-tests.sh, tests/."""
    yaml_path = root / "task.yaml"
    try:
        raw = yaml.safe_load(_read_text(yaml_path, "task.yaml"))
    except yaml.YAMLError as e:
        raise _fail(yaml_path, f"invalid YAML: {e}") from None
    except RecursionError:
        raise _fail(yaml_path, "invalid YAML: nested deeper than the parser allows") from None
    if not isinstance(raw, dict):
        raise _fail(yaml_path, "expected a mapping of keys (instruction, max_agent_timeout_sec, ...)")
    instruction = raw.get("instruction")
    if not instruction and isinstance(raw.get("descriptions"), list) and raw["descriptions"]:
        instruction = raw["descriptions"][0].get("description")
    if not isinstance(instruction, str) or not instruction.strip():
        raise _fail(yaml_path, "missing: a non-empty instruction string is required", "instruction")
    parser = raw.get("parser_name") or "pytest"  # Task.parser_name's default (an adapter may write null)
    if not isinstance(parser, str) or parser not in TB1_PARSERS:
        known = ", ".join(TB1_PARSERS)
        raise _fail(yaml_path, f"unknown parser {parser!r}: Terminal-Bench defines {known}", "parser_name")
    try:  # validated as a whole so that an error's location is `agent.timeout_sec`, mapped back below
        config = TaskConfig.model_validate(
            {
                "metadata": {
                    k: raw[k] for k in ("author_name", "author_email", "difficulty", "category", "tags") if k in raw
                },
                "agent": {"timeout_sec": raw.get("max_agent_timeout_sec", 600.0)},
                "verifier": {"timeout_sec": raw.get("max_test_timeout_sec", 180.0)},
            }
        )
    except ValidationError as e:
        bad = _pydantic_error(yaml_path, e)
        key = {"agent.timeout_sec": "max_agent_timeout_sec", "verifier.timeout_sec": "max_test_timeout_sec"}
        raise _fail(yaml_path, bad.problem, key.get(bad.field or "", bad.field)) from None
    dockerfile = _require_file(root / "Dockerfile", "Dockerfile")
    _check_dockerfile(dockerfile)
    solution = root / "solution.sh"
    if not solution.is_file() and (root / "solution.yaml").is_file():
        raise _fail(root / "solution.yaml", "solution.yaml (scripted keystrokes) is not supported; add solution.sh")
    _require_file(solution, "solution.sh (the reference solution)")
    run_tests = _require_file(root / "run-tests.sh", "run-tests.sh (the verifier)")
    # tests/ is optional, as in Terminal-Bench (harness.py `_setup_test_env` copies it when it exists)
    test_dir = [FileCopy(source=root / "tests", target="/tests")] if (root / "tests").is_dir() else []
    return Environment(
        root=root,
        name=_env_name(root, config, EnvFormat.TB1),
        format=EnvFormat.TB1,
        instruction=instruction,
        config=config,
        build_context=root,
        dockerfile=dockerfile,
        solution=[FileCopy(source=solution, target="/solution/solve.sh")],
        tests=[*test_dir, FileCopy(source=run_tests, target="/tests/run-tests.sh")],
        verifier_command="bash /tests/run-tests.sh",
        reward_source=RewardSource(parser),
        version=version or content_hash(root),
        warnings=tb1_unknown_keys(raw, str(yaml_path)),
    )
