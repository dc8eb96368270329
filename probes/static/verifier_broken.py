"""A verifier that cannot work, read from the task's files (issue 44): each task below fails every trial or passes
none, and without these a user learns it only from a full run.

  verifier-test-file-invalid    a Python file the verifier runs (pytest or python) does not parse: its line
  verifier-test-file-no-tests   every file a pytest invocation collects defines no test (pytest exits 5)
  verifier-runs-missing-file    test.sh runs, sources or hands pytest a /tests file that tests/ does not hold
  solution-empty                the reference solution (solution/solve.sh, solution.sh) runs no command

The files come from the task model (core/task_model/: test.sh's commands, each test file's text and tree, read and
parsed once per version; whether a module may define a test and whether pytest is told to collect other names,
core/task_model/collect.py; solve.sh's commands, core/task_model/solution.py). What the verifier runs is read from
test.sh's commands, with `$TEST_DIR` read as /tests and a `cd` into /tests followed. Quiet on purpose: a file
test.sh writes, downloads, copies or extracts (its path, name or folder named by such a command), a separate
verifier image (tests/Dockerfile), files the Terminal-Bench harness supplies, Python run as anything but pytest or
a script (bash, node, go test: not read), tests collected from a folder (only its test_*.py / *_test.py are read),
pytest configured to collect other names or by a conftest hook, and any class (unittest.TestCase subclasses,
inherited tests): we would rather miss than cry wolf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from envqa.core.environment import EnvFormat, Environment
from envqa.core.models import Finding
from envqa.core.parsers.shell import Command
from envqa.core.task_model import model_of, tests_of
from envqa.core.task_model.collect import collection_configured
from envqa.core.task_model.files import TestFile
from envqa.probes.static.task_files import rel, script_commands, test_script

TEST_DIR_VAR = re.compile(r"\$\{TEST_DIR(?::?-[^}]*)?\}|\$TEST_DIR\b")
SHELLS = {"bash", "sh", "zsh", "dash", "source", "."}
PYTHONS = re.compile(r"^python(\d(\.\d+)?)?$")
PYTEST_VALUE_OPTS = {"-k", "-m", "-p", "-c", "-o", "-W", "-n", "--ctrf", "--junitxml", "--junit-xml", "--rootdir"}
PYTEST_VALUE_OPTS |= {"--basetemp", "--confcutdir", "--ignore", "--deselect", "--tb", "--timeout", "--maxfail"}
PYTEST_VALUE_OPTS |= {"--durations", "--log-file", "--cov", "--cov-report", "--json-report-file", "-r"}
WRITERS = {"cp", "mv", "ln", "install", "curl", "wget", "tar", "unzip", "git", "rsync", "touch", "tee", "sed"}
WRITERS |= {"perl", "gunzip", "bunzip2", "xz", "7z", "base64", "dd", "uudecode", "openssl", "gpg", "patch", "mkdir"}
TB1_HARNESS_FILES = {"setup-uv-pytest.sh", "run-uv-pytest.sh"}
"""Scripts the Terminal-Bench 1 harness copies into $TEST_DIR itself: a run-tests.sh runs them without shipping them."""


@dataclass
class _Verifier:
    """What test.sh runs, as host paths, and where each was named."""

    runs: list[tuple[Path, Command, str]] = field(default_factory=list)  # (host path, command, how: pytest/python/sh)
    pytest_sets: list[tuple[list[Path], Command]] = field(default_factory=list)  # files one invocation collects
    written: list[str] = field(default_factory=list)  # words and targets of commands that write files


def _container_to_host(env: Environment, path: str) -> Path | None:
    """The host path of a container path under one of the tests' copy targets (/tests), else None."""
    for copy in env.tests:  # a file copied to its own place first (TB1's run-tests.sh)
        if path == copy.target.rstrip("/"):
            return copy.source
    for copy in env.tests:
        target = copy.target.rstrip("/")
        if path.startswith(target + "/") and copy.source.is_dir():
            return copy.source / path[len(target) + 1 :]
    return None


def _resolve(word: str, cwd: str | None) -> str | None:
    word = TEST_DIR_VAR.sub("/tests", word).split("::", 1)[0]
    if "$" in word or "*" in word or "`" in word:
        return None
    if word.startswith("/"):
        return word.rstrip("/") or "/"
    if cwd is None:
        return None
    return f"{cwd}/{word.removeprefix('./')}".rstrip("/")


def _pytest_args(words: list[str]) -> list[str] | None:
    """The arguments after `pytest` (`python -m pytest`, `uv run pytest`, `uvx ... pytest`), else None."""
    for i, w in enumerate(words):
        if w.rsplit("/", 1)[-1] in ("pytest", "py.test"):
            return words[i + 1 :]
    return None


def _pytest_paths(args: list[str]) -> tuple[list[str], bool]:
    """(path arguments, whether a plugin is loaded with -p)."""
    paths, plugin, skip = [], False, False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a in PYTEST_VALUE_OPTS:
            skip = True
            plugin = plugin or (a == "-p" and i + 1 < len(args) and not args[i + 1].startswith("no:"))
            continue
        if not a.startswith("-"):
            paths.append(a)
    return paths, plugin


def _script_arg(words: list[str]) -> str | None:
    """The script a shell or python runs (`bash -e x.sh`, `python3 -u x.py`), None for `-c`/`-m` or none."""
    for w in words[1:]:
        if w in ("-c", "-m"):
            return None
        if not w.startswith("-"):
            return w
    return None


def _test_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if p.is_file() and re.match(r"(test_.*|.*_test)\.py$", p.name))


def _model_file(env: Environment, host: Path) -> TestFile | None:
    """The test model's copy of a file under tests/ (its text and tree, read once per version)."""
    return next((f for f in tests_of(env).files if f.path == host), None)


def _read_verifier(env: Environment) -> _Verifier:
    v = _Verifier()
    cwd: str | None = None
    for cmd in script_commands(env):
        if not cmd.reachable or not cmd.words:
            continue
        words = [TEST_DIR_VAR.sub("/tests", w) for w in cmd.words]
        v.written += [t for op, t in cmd.redirects if op in (">", ">>", ">|", "&>")]
        if cmd.name in WRITERS or (PYTHONS.match(cmd.name) and "-c" in words):
            v.written += words[1:]
        if cmd.name == "cd" and len(words) > 1:
            cwd = _resolve(words[1], cwd) if words[1].startswith(("/", ".")) or cwd else None
            continue
        _runs_of(env, cmd, words, cwd, v)
    return v


def _runs_of(env: Environment, cmd: Command, words: list[str], cwd: str | None, v: _Verifier) -> None:
    pytest = _pytest_args(words)
    if pytest is not None:
        paths, plugin = _pytest_paths(pytest)
        collected: list[Path] = []
        resolved = [_resolve(p, cwd) for p in paths] or ([cwd] if cwd else [])
        for p in resolved:
            host = _container_to_host(env, p) if p else None
            if host is None:
                collected = []
                break  # a path outside /tests (or unknown): not ours to judge
            if host.is_dir():
                collected += _test_files(host)
            else:
                v.runs.append((host, cmd, "pytest"))
                collected.append(host)
        if collected and not plugin:
            v.pytest_sets.append((collected, cmd))
        return
    name = cmd.name
    if name in ("source", "."):
        arg = words[1] if len(words) > 1 else None
    elif name in SHELLS or PYTHONS.match(name):
        arg = _script_arg(words)
    else:
        arg = words[0] if "/" in words[0] else None  # a program run by its path (`/tests/check.sh`)
    target = _resolve(arg, cwd) if arg else None
    host = _container_to_host(env, target) if target else None
    if host is not None:
        v.runs.append((host, cmd, "python" if PYTHONS.match(name) else "sh"))


def _written(v: _Verifier, host: Path) -> bool:
    """Whether test.sh writes this file (or its folder) itself: its name, or its folder's, is the last part of a
    word of a writing command or of a redirection target."""
    names = {host.name, host.parent.name}
    for w in v.written:
        w = TEST_DIR_VAR.sub("/tests", w).rstrip("/")
        if not w.startswith("-") and w.rsplit("/", 1)[-1] in names:
            return True
    return False


def _finding(
    rule: str, message: str, evidence: list[str], location: str, case: str | None = None, **fields: str
) -> Finding:
    """Label, severity and fix from the rule's registry row (`case`: one of its remedies; `fields` fill it)."""
    return Finding.of(
        rule,
        message,
        case=case,
        remedy_fields=fields or None,
        subtype="broken-environment",
        evidence=evidence,
        location=location,
    )


def _missing(env: Environment, v: _Verifier, script_rel: str) -> list[Finding]:
    out, seen = [], set()
    for host, cmd, _how in v.runs:
        if host.exists() or host in seen or _written(v, host):
            continue
        if env.format == EnvFormat.TB1 and host.name in TB1_HARNESS_FILES:
            continue
        seen.add(host)
        where = rel(env, host)
        out.append(
            _finding(
                "verifier-runs-missing-file",
                f"{script_rel} runs {where}, which the task does not ship: the verifier fails on every trial",
                [cmd.evidence(script_rel), f"{where}: no such file"],
                f"{script_rel}:{cmd.line}",
                where=where,
            )
        )
    return out


def _parse_findings(env: Environment, files: list[tuple[Path, Command]], script_rel: str) -> list[Finding]:
    out, seen = [], set()
    for host, cmd in files:
        f = _model_file(env, host)
        if host in seen or f is None or not f.is_python or f.error is not None or f.tree is not None:
            continue
        seen.add(host)
        where = f.rel
        if f.syntax_error_at is not None:
            line, msg = f.syntax_error_at
            out.append(
                _finding(
                    "verifier-test-file-invalid",
                    f"{where} is not valid Python ({msg}, line {line}): the verifier cannot import it, so every "
                    "trial fails",
                    [f"{where}:{line}: {f.line(line)}", cmd.evidence(script_rel)],
                    f"{where}:{line}",
                )
            )
        else:
            out.append(
                _finding(
                    "verifier-test-file-invalid",
                    f"{where} is not Python source (NUL bytes, or nested too deep): every trial fails",
                    [f"{where}: does not parse", cmd.evidence(script_rel)],
                    where,
                    "not-source",
                )
            )
    return out


def _no_test_findings(env: Environment, v: _Verifier, script_rel: str) -> list[Finding]:
    out = []
    collectable = tests_of(env).collectable  # core/task_model/collect.py
    for files, cmd in v.pytest_sets:
        present = [f for f in files if f.is_file() and not _written(v, f)]
        if len(present) != len(files) or collection_configured(present):
            continue
        empty = []
        for f in present:
            if collectable.get(f, True):
                empty = []  # collects a test, or has no tree: verifier-test-file-invalid says it (or not ours)
                break
            empty.append(f)
        if empty:
            names = [rel(env, f) for f in empty]
            out.append(
                _finding(
                    "verifier-test-file-no-tests",
                    f"{', '.join(names)} define{'s' if len(names) == 1 else ''} no test: pytest collects nothing "
                    "and fails (exit 5), so no trial can pass",
                    [f"{n}: no test function or class" for n in names] + [cmd.evidence(script_rel)],
                    names[0],
                )
            )
    return out


def _solution_findings(env: Environment) -> list[Finding]:
    out = []
    for script in model_of(env).solution:  # core/task_model/solution.py
        text = script.text
        if script.error is not None or any(c.reachable for c in script.commands):
            continue
        where = rel(env, script.path)
        out.append(
            _finding(
                "solution-empty",
                f"{where} runs no command: the reference solution does nothing, so the oracle is the nop and "
                "the task cannot be shown solvable",
                [f"{where}: {'empty' if not text.strip() else 'comments and blank lines only'}"],
                where,
            )
        )
    return out


def verifier_broken_findings(env: Environment) -> list[Finding]:
    """Every finding above for one task (or one step's view of it)."""
    found = _solution_findings(env)
    script = test_script(env)
    if script is None or any((c.source / "Dockerfile").is_file() for c in env.tests if c.source.is_dir()):
        return found  # no script of ours to read, or a separate verifier image that may bring its own files
    script_rel = rel(env, script)
    v = _read_verifier(env)
    found += _missing(env, v, script_rel)
    python_runs = [(h, c) for h, c, how in v.runs if how in ("pytest", "python") and not _written(v, h)]
    python_runs += [(f, c) for files, c in v.pytest_sets for f in files if not _written(v, f)]
    found += _parse_findings(env, python_runs, script_rel)
    return found + _no_test_findings(env, v, script_rel)
