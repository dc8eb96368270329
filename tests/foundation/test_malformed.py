"""Malformed environments through the real CLI: exit 2, a message naming the file (and field), no state.

Each case starts from a copy of a valid example and breaks one thing. `qa run` must fail before it
writes anything: no QA_HOME, so no run row, checkpoint or run directory (a failed load leaves nothing).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from qa_testkit import copy_example, run_qa


def _sub(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        path = root / rel
        text = path.read_text()
        assert old in text, f"{old!r} not in {rel}"
        path.write_text(text.replace(old, new, 1))

    return mutate


def _append(rel: str, extra: str) -> Callable[[Path], None]:
    return lambda root: (root / rel).write_text((root / rel).read_text() + extra)


def _write(rel: str, data: str | bytes) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode())

    return mutate


def _remove(rel: str) -> Callable[[Path], None]:
    def mutate(root: Path) -> None:
        path = root / rel
        shutil.rmtree(path) if path.is_dir() else path.unlink()

    return mutate


@dataclass
class Case:
    id: str
    example: str
    mutate: Callable[[Path], None]
    file: str  # path relative to the environment that the message must name ("" = the directory itself)
    field: str | None = None
    words: tuple[str, ...] = ()  # further words the message must contain
    lint_exit: int = 2  # `qa lint` reports some problems as findings instead (exit 1), with the same words


H, T = "clean-wordfreq", "tb1-clean"
CASES = [
    Case("no-task-file", H, _remove("task.toml"), "", None, ("task.toml", "task.yaml")),
    Case(
        "invalid-toml",
        H,
        _write("task.toml", 'version = "1.0"\n[agent\ntimeout_sec = 5\n'),
        "task.toml",
        None,
        ("invalid TOML",),
    ),
    # Unknown keys are warnings since schema 1.4 (issue 23: tests/foundation/test_task_config.py); bad VALUES
    # of known keys, the new ones included, still stop here.
    Case(
        "bad-verifier-mode",
        H,
        _sub("task.toml", "[verifier]\n", '[verifier]\nenvironment_mode = "sideways"\n'),
        "task.toml",
        "verifier.environment_mode",
        ("sideways",),
    ),
    Case(
        "bad-step-min-reward",
        H,
        _append("task.toml", '\n[[steps]]\nname = "one"\nmin_reward = "high"\n'),
        "task.toml",
        "steps.0.min_reward",
        ("high",),
    ),
    Case(
        "wrong-type",
        H,
        _sub("task.toml", "timeout_sec = 120.0", 'timeout_sec = "fast"'),
        "task.toml",
        "agent.timeout_sec",
        ("fast",),
    ),
    Case(
        "table-expected",
        H,
        _sub("task.toml", 'version = "1.0"\n', 'version = "1.0"\nsolution = 5\n'),
        "task.toml",
        "solution",
    ),
    Case(
        "negative-timeout",
        H,
        _sub("task.toml", "timeout_sec = 60.0", "timeout_sec = -1"),
        "task.toml",
        "verifier.timeout_sec",
        ("greater than 0",),
    ),
    Case(
        "bad-network-mode",
        H,
        _append("task.toml", 'network_mode = "sometimes"\n'),
        "task.toml",
        "environment.network_mode",
        ("sometimes",),
    ),
    Case(
        "cpus-zero", H, _sub("task.toml", "cpus = 1", "cpus = 0"), "task.toml", "environment.cpus", ("greater than 0",)
    ),
    Case(
        "memory-too-small",
        H,
        _sub("task.toml", "memory_mb = 512", "memory_mb = 1"),
        "task.toml",
        "environment.memory_mb",
    ),
    Case("missing-instruction", H, _remove("instruction.md"), "instruction.md", None, ("missing",)),
    Case("empty-instruction", H, _write("instruction.md", "  \n\n"), "instruction.md", None, ("empty",), lint_exit=1),
    Case(
        "non-utf8-instruction", H, _write("instruction.md", b"caf\xe9 \xff\xfe\n"), "instruction.md", None, ("UTF-8",)
    ),
    Case("missing-dockerfile", H, _remove("environment/Dockerfile"), "environment/Dockerfile", None, ("missing",)),
    Case("missing-environment-dir", H, _remove("environment"), "environment/Dockerfile", None, ("missing",)),
    Case(
        "dockerfile-without-from",
        H,
        _write("environment/Dockerfile", "# base\nRUN echo hi\n"),
        "environment/Dockerfile",
        None,
        ("FROM",),
    ),
    Case("missing-test-sh", H, _remove("tests/test.sh"), "tests/test.sh", None, ("missing", "verifier")),
    Case("missing-solve-sh", H, _remove("solution/solve.sh"), "solution/solve.sh", None, ("missing",)),
    Case(
        "solve-sh-is-a-directory",
        H,
        lambda r: (_remove("solution/solve.sh")(r), (r / "solution/solve.sh").mkdir()),
        "solution/solve.sh",
        None,
        ("regular file",),
    ),
    Case(
        "tb1-invalid-yaml",
        T,
        _write("task.yaml", "instruction: [unclosed\n  - x: : :\n"),
        "task.yaml",
        None,
        ("invalid YAML",),
    ),
    Case("tb1-not-a-mapping", T, _write("task.yaml", "- just\n- a list\n"), "task.yaml", None, ("mapping",)),
    Case("tb1-missing-instruction", T, _write("task.yaml", "difficulty: easy\n"), "task.yaml", "instruction"),
    Case(
        "tb1-negative-timeout",
        T,
        _sub("task.yaml", "max_agent_timeout_sec: 60", "max_agent_timeout_sec: -5"),
        "task.yaml",
        "max_agent_timeout_sec",
        ("greater than 0",),
    ),
    Case(
        "tb1-wrong-parser",
        T,
        _sub("task.yaml", "parser_name: pytest", "parser_name: junit"),
        "task.yaml",
        "parser_name",
        ("junit", "swebench"),
    ),
    Case("tb1-missing-run-tests", T, _remove("run-tests.sh"), "run-tests.sh", None, ("missing",)),
    Case("tb1-missing-solution", T, _remove("solution.sh"), "solution.sh", None, ("missing",)),
    Case("tb1-missing-dockerfile", T, _remove("Dockerfile"), "Dockerfile", None, ("missing",)),
]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _check_message(stderr: str, root: Path, case: Case) -> None:
    msg = _flat(stderr)
    expected_path = str(root / case.file) if case.file else str(root)
    assert expected_path in msg, f"message does not name {expected_path}: {msg}"
    if case.field:
        assert f"{case.field}:" in msg, f"message does not name field {case.field}: {msg}"
    for word in case.words:
        assert word in msg, f"{word!r} missing from: {msg}"
    assert "Traceback" not in stderr


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every case through `qa lint` and `qa run --json`, four CLI processes at a time."""

    def one(case: Case):
        base = tmp_path_factory.mktemp(case.id)
        root = copy_example(case.example, base).resolve()
        case.mutate(root)
        env = dict(os.environ, QA_HOME=str(base / "qa-home"))
        env.pop("REDIS_URL", None)
        lint = run_qa(["lint", str(root)], env, timeout=120)
        run = run_qa(["run", str(root), "--json"], env, timeout=120)
        return case.id, (root, lint, run, Path(env["QA_HOME"]))

    # pytest makes the session's base temp dir on first use, unlocked: four threads reaching it at once each made
    # their own, and mktemp then refused a name outside "the" base ("... is not a normalized and relative path").
    tmp_path_factory.getbasetemp()
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, CASES))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@pytest.mark.fast
def test_malformed_environment(case: Case, outcomes):
    root, lint, run, home = outcomes[case.id]
    assert lint.returncode == case.lint_exit, lint.stderr
    if case.lint_exit == 2:
        _check_message(lint.stderr, root, case)
    else:  # a finding (issue 23: `qa lint` lints what `qa run` refuses): the file and the words on stdout
        assert case.file in lint.stdout and all(w in lint.stdout for w in case.words), lint.stdout
    assert run.returncode == 2, run.stderr
    _check_message(run.stderr, root, case)
    doc = json.loads(run.stdout)  # --json prints one object: a report, or the error; never half of one
    assert doc["exit_code"] == 2 and doc["error"] and str(root) in (doc["path"] or "")
    assert not home.exists(), f"a failed load left state behind: {sorted(p.name for p in home.rglob('*'))}"


@pytest.mark.fast
def test_env_dir_is_a_file(tmp_path, qa_env):
    path = tmp_path / "task.toml"
    path.write_text('version = "1.0"\n')
    for cmd in (["lint", str(path)], ["run", str(path)]):
        res = run_qa(cmd, qa_env, timeout=60)
        assert res.returncode == 2
        assert str(path) in _flat(res.stderr) and "not a directory" in res.stderr
    assert not Path(qa_env["QA_HOME"]).exists()


@pytest.mark.fast
def test_env_dir_does_not_exist(tmp_path, qa_env):
    path = tmp_path / "nowhere"
    res = run_qa(["run", str(path)], qa_env, timeout=60)
    assert res.returncode == 2 and str(path) in _flat(res.stderr) and "no such directory" in res.stderr
    assert not Path(qa_env["QA_HOME"]).exists()


@pytest.mark.fast
def test_lint_json_reports_the_error(tmp_path, qa_env):
    import json

    root = copy_example(H, tmp_path)
    _sub("task.toml", "cpus = 1", "cpus = 0")(root)
    res = run_qa(["lint", str(root), "--json"], qa_env, timeout=60)
    assert res.returncode == 2
    doc = json.loads(res.stdout)
    assert doc["ok"] is False and "environment.cpus" in doc["error"]


@pytest.mark.fast
def test_resume_of_unknown_run_is_an_input_error(qa_env):
    res = run_qa(["run", ".", "--resume", "run-does-not-exist"], qa_env, timeout=60)
    assert res.returncode == 2 and "run-does-not-exist" in res.stderr
