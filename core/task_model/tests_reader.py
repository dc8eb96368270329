"""The one reader of a task's tests: every rule that reads the verifier's files reads them here.

`read_tests(env)` lists the files of `env.tests` (core/task_model/files.py reads each at most once through the
guarded reader and parses it at most once) and answers, as lazily computed facets of one `TestsModel`:

- `cases`: each test (pytest function or method, unittest method) with what it reads, runs, compares with
  what, its thresholds and tolerances, and what it asserts unchanged (core/task_model/cases.py);
- `shape`: what the verifier's checks compare the output against (core/task_model/checks.py);
- `requirements`: the paths, commands, URLs and names the tests require (core/consistency/requirements.py);
- `thresholds`: counted collections passed above a threshold (core/task_model/thresholds.py);
- `vacuity`: per test, what can make it pass vacuously (core/task_model/vacuity.py);
- `string_constants(file)`: the strings a file holds (a Python file's constants, a data file's text);
- `collectable`, `normalised_compares`, `strict_bounds`, `keyword_calls(names)`, `script_tools`,
  `script_names(name)`, `verifier_text`: the facts single rules ask (core/task_model/collect.py, normalised.py,
  bounds.py, calls.py, verifier_text.py), so that no probe parses or greps a test file itself.

To add a fact: a facet here (a cached property over `self.python` / `self.script`), computed from the trees
and commands the files already hold; never open or parse a test file anywhere else.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import cached_property

from envqa.core.consistency.model import Requirement
from envqa.core.consistency.requirements import python_requirements, tree_requirements
from envqa.core.consistency.shell_requirements import commands_requirements, python_heredocs
from envqa.core.defaults import GUARD_MAX_BYTES, MAX_TEST_BYTES
from envqa.core.environment import Environment
from envqa.core.task_model.bounds import StrictBound, strict_asserts
from envqa.core.task_model.calls import KeywordCall, keyword_calls
from envqa.core.task_model.cases import TestCase, read_cases
from envqa.core.task_model.checks import Shape, verifier_shape
from envqa.core.task_model.collect import defines_tests
from envqa.core.task_model.files import SCRIPT_NAMES, TestFile, test_files
from envqa.core.task_model.normalised import normalised_compares
from envqa.core.task_model.thresholds import tree_thresholds
from envqa.core.task_model.vacuity import ShapeOfTest, tree_shapes
from envqa.core.task_model.verifier_text import verifier_text

DATA_SUFFIXES = (".sh", ".txt", ".json", ".out", ".expected")  # files whose whole text is an expected value


@dataclass(eq=False)
class TestsModel:
    """The verifier's files and everything read from them; each facet computed once, on first use."""

    files: list[TestFile] = field(default_factory=list)
    script: TestFile | None = None  # tests/test.sh (run-tests.sh in Terminal-Bench 1)

    __test__ = False  # not a pytest class

    @property
    def python(self) -> list[TestFile]:
        return [f for f in self.files if f.is_python]

    @property
    def unparsed(self) -> list[TestFile]:
        """Python test files that do not parse, and files the guarded reader refused: facts, not crashes."""
        return [f for f in self.files if f.error is not None or f.parse_error is not None]

    def _small_python(self) -> list[TestFile]:
        return [f for f in self.python if f.size <= MAX_TEST_BYTES and f.tree is not None]

    @cached_property
    def cases(self) -> list[TestCase]:
        return read_cases([f for f in self.python if f.tree is not None])

    @cached_property
    def shape(self) -> Shape:
        return verifier_shape(self.script, self.python)

    @cached_property
    def thresholds(self) -> list[str]:
        """ "tests/<file>:line: code" of each threshold over a counted collection (files up to MAX_TEST_BYTES)."""
        return [t for f in self._small_python() for t in tree_thresholds(f.tree, f.in_tests)]  # type: ignore[arg-type]

    @cached_property
    def vacuity(self) -> list[ShapeOfTest]:
        return [s for f in self._small_python() for s in tree_shapes(f.tree, f.text, f.in_tests)]  # type: ignore[arg-type]

    def _guard_text(self, f: TestFile) -> str:
        """The text the instruction checks read: "" for a file over GUARD_MAX_BYTES or not UTF-8."""
        text = f.text
        return "" if f.size > GUARD_MAX_BYTES or f.undecodable or f.error is not None else text

    def _requirement_files(self) -> list[TestFile]:
        return [
            f
            for f in self.files
            if f.copy_source.is_file() or f.suffix in (".py", ".sh", ".bash") or f.name == "test.sh"
        ]

    @cached_property
    def requirements(self) -> list[Requirement]:
        """Every requirement of the tests' .py and .sh files (core/consistency/)."""
        reqs: list[Requirement] = []
        for f in self._requirement_files():
            text = self._guard_text(f)
            if f.is_python:
                reqs += tree_requirements(f.rel, f.lines, f.tree) if text and f.tree is not None else []
                continue
            reqs += commands_requirements(f.rel, f.commands if f.is_shell else _commands(text))
            reqs += [r for start, body in python_heredocs(text) for r in python_requirements(f.rel, body, start)]
        return reqs

    @cached_property
    def imported_modules(self) -> set[str]:
        """Every module name the Python test files import, whole and by each dotted part (`from lib.grade import
        x` gives lib.grade, lib and grade): how a test names a helper that sits beside it."""
        names: set[str] = set()
        for f in self.python:
            for node in ast.walk(f.tree) if f.tree is not None else ():
                found = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.module:
                    found = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                for name in found:
                    names.add(name)
                    names.update(name.split("."))
        return names

    @cached_property
    def requirements_text(self) -> str:
        return "\n".join(self._guard_text(f) for f in self._requirement_files())

    @cached_property
    def collectable(self) -> dict:
        """{path: whether pytest might collect a test from it} of each Python file that parses
        (core/task_model/collect.py); a file missing here has no tree."""
        return {f.path: defines_tests(f.tree) for f in self.python if f.tree is not None}

    @cached_property
    def normalised_compares(self) -> list[tuple[TestFile, int]]:
        """(file, line) of each comparison with a parser's re-serialisation (core/task_model/normalised.py)."""
        return [(f, n) for f in self.python if f.tree is not None for n in normalised_compares(f.tree)]

    @cached_property
    def strict_bounds(self) -> list[tuple[TestFile, StrictBound]]:
        """Each strict `assert x > B` / `x < B` of the Python files (core/task_model/bounds.py)."""
        return [(f, b) for f in self.python if f.tree is not None for b in strict_asserts(f.tree)]

    def keyword_calls(self, names: list[str]) -> list[KeywordCall]:
        """Every call of one of `names` in any test file's text, with its keywords (core/task_model/calls.py)."""
        return keyword_calls(self.files, names)

    @cached_property
    def script_tools(self) -> set[str]:
        """The command names the shell scripts at the top of the tests' copies run (a replaced one is tampering)."""
        top = [
            f for f in self.files if f.suffix == ".sh" and (f.copy_source.is_file() or f.path.parent == f.copy_source)
        ]
        return {c.name for f in top for c in f.commands if c.name}

    def script_names(self, name: str) -> bool:
        """Whether the entry script names a file `name` as a word (`bash helper.sh`, `/tests/lib.py`)."""
        pattern = rf"(?<![\w.-]){re.escape(name)}(?![\w-])"
        return bool(self.script and re.search(pattern, self.script.text))

    @cached_property
    def verifier_text(self) -> str:
        """The verifier's files as one text, at most MAX_TEST_BYTES (core/task_model/verifier_text.py)."""
        return verifier_text(self.files)

    def string_constants(self, f: TestFile) -> list[str]:
        """A Python file's string constants but its docstrings; a data file's whole text; else nothing."""
        if f.is_python:
            return _constants(f.tree) if f.tree is not None else []
        if f.suffix in DATA_SUFFIXES and f.name != "test.sh":
            return [f.text]
        return []


def _commands(text: str) -> list:
    from envqa.core.parsers.shell import parse_script

    return parse_script(text)


def _constants(tree: ast.Module) -> list[str]:
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def entry_script(env: Environment, files: list[TestFile]) -> TestFile | None:
    """The verifier's entry script: a file copied to test.sh (or run-tests.sh: TB1's, a milestone's own script),
    else test.sh (or run-tests.sh) at the top of a tests copy."""
    by_path = {f.path: f for f in files}
    for copy in sorted(env.tests, key=lambda c: c.source.is_dir()):
        for name in SCRIPT_NAMES:
            if copy.source.is_dir():
                p = copy.source / name
            elif copy.target.rsplit("/", 1)[-1] == name:
                p = copy.source
            else:
                continue
            if p in by_path and p.is_file():
                return by_path[p]
    return None


def read_tests(env: Environment) -> TestsModel:
    """The test model of `env`'s verifier files (uncached: core/task_model/model.py keeps one per version)."""
    files = test_files(env)
    return TestsModel(files=files, script=entry_script(env, files))
