"""One task model per version: the environment and everything read from its files, built once per process.

A version's id is the content hash of its files (core/environment.py), so what is derived from the files is
the same wherever they lie (the user's folder, its snapshot under QA_HOME/envs/) and is computed once: the
test model (core/task_model/tests_reader.py), test.sh's commands, the Dockerfile's spans, Harbor's checksum.
Every graph node, job and rule that holds an `Environment` gets these from `model_of(env)`; nothing opens or
parses a test file on its own. The cache is keyed by the version and the layout of its tests (a step of a
multi-step task sees its own tests under the same version) and keeps the last ENV_CACHE_SIZE versions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from envqa.core.defaults import ENV_CACHE_SIZE
from envqa.core.environment import Environment
from envqa.core.input_files import InputFileError, read_text
from envqa.core.parsers.dockerfile import Span, instruction_spans
from envqa.core.parsers.shell import Command
from envqa.core.task_checksum import harbor_task_checksum
from envqa.core.task_model.assertion_readers import read_assertions
from envqa.core.task_model.assertions import AssertionModel
from envqa.core.task_model.fetches import Fetch, read_fetches
from envqa.core.task_model.provenance import Provenance, provenance_of
from envqa.core.task_model.solution import SolutionScript, solution_scripts
from envqa.core.task_model.tests_reader import TestsModel, read_tests

ModelKey = tuple[str, tuple[tuple[str, str], ...]]


@dataclass(eq=False)
class Derived:
    """What a version's files say, shared by every `TaskModel` of that version (root-independent facts)."""

    root: Path  # where it was first read (the facts below name files relative to it)
    dockerfile: Path
    tests: TestsModel
    provenance: Provenance | None = None  # built on first use from the first caller's env (root-independent)
    fetches: list[Fetch] | None = None  # likewise (core/task_model/fetches.py: files named relative to the root)
    assertions: AssertionModel | None = None  # likewise (core/task_model/assertions.py)
    solutions: dict[tuple[str, ...], list[SolutionScript]] = field(default_factory=dict)  # by the solution copies

    @cached_property
    def dockerfile_spans(self) -> list[Span]:
        """The Dockerfile's instructions with their line spans ([] when the guarded reader refuses it)."""
        try:
            return instruction_spans(read_text(self.dockerfile, strict=False))
        except InputFileError:
            return []

    @cached_property
    def checksum(self) -> str | None:
        """Harbor's task checksum of the version (core/task_checksum.py)."""
        return harbor_task_checksum(self.root)


@dataclass(eq=False)
class TaskModel:
    """A version as the rules see it: the caller's `Environment` (its paths, its name) and the shared facts."""

    env: Environment
    derived: Derived

    @property
    def version(self) -> str:
        return self.env.version

    @property
    def tests(self) -> TestsModel:
        return self.derived.tests

    @property
    def test_sh(self) -> list[Command]:
        """The verifier script's commands (tests/test.sh or run-tests.sh; [] without one)."""
        script = self.tests.script
        return script.commands if script is not None else []

    @property
    def dockerfile_spans(self) -> list[Span]:
        return self.derived.dockerfile_spans

    @property
    def checksum(self) -> str | None:
        return self.derived.checksum

    @property
    def provenance(self) -> Provenance:
        """Where the files the verifier uses come from (core/task_model/provenance.py)."""
        if self.derived.provenance is None:
            self.derived.provenance = provenance_of(self.env, self.dockerfile_spans)
        return self.derived.provenance

    @property
    def fetches(self) -> list[Fetch]:
        """What the task fetches from outside, phase by phase (core/task_model/fetches.py): every network and pin
        rule asks this list instead of parsing commands."""
        if self.derived.fetches is None:
            script = self.tests.script
            test_file = (script.rel, script.text) if script is not None else None
            self.derived.fetches = read_fetches(self.env, self.dockerfile_spans, self.test_sh, test_file)
        return self.derived.fetches

    @property
    def solution(self) -> list[SolutionScript]:
        """The reference solution's shell scripts, each read and parsed once (core/task_model/solution.py); keyed
        by the solution's copies, since a step of a multi-step task has its own."""
        key = tuple(str(c.source) for c in self.env.solution)
        if key not in self.derived.solutions:
            self.derived.solutions[key] = solution_scripts(self.env)
        return self.derived.solutions[key]

    @property
    def assertions(self) -> AssertionModel:
        """Every check the verifier makes, one record each (core/task_model/assertions.py): what it observes, what
        it compares with and where; every rule about what the tests check is a query over these."""
        if self.derived.assertions is None:
            self.derived.assertions = read_assertions(self.tests, self.provenance)
        return self.derived.assertions


class TaskModels:
    """The derived facts of the last `size` versions, by version and tests layout; thread-safe. `builds`
    counts the versions read (cache misses), so a test can hold a process to one read per version."""

    def __init__(self, size: int = ENV_CACHE_SIZE):
        self.size = size
        self._items: OrderedDict[ModelKey, Derived] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0

    @staticmethod
    def key(env: Environment) -> ModelKey:
        layout = []
        for copy in env.tests:
            try:
                where = Path(copy.source).relative_to(env.root).as_posix()
            except ValueError:
                where = Path(copy.source).as_posix()
            layout.append((where, copy.target))
        return env.version, tuple(layout)

    def of(self, env: Environment) -> TaskModel:
        key = self.key(env)
        with self._lock:
            derived = self._items.get(key)
            if derived is None:
                self.builds += 1
                derived = Derived(root=env.root, dockerfile=env.dockerfile, tests=read_tests(env))
                self._items[key] = derived
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
            self._items.move_to_end(key)
        return TaskModel(env=env, derived=derived)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.builds = 0


MODELS = TaskModels()


def model_of(env: Environment) -> TaskModel:
    """The task model of `env`'s version: built on first use in this process, shared afterwards."""
    return MODELS.of(env)


def tests_of(env: Environment) -> TestsModel:
    """The test model of `env`'s version (the one reader of the verifier's files)."""
    return MODELS.of(env).tests


tests_of.__test__ = False  # type: ignore[attr-defined]  # a reader, not a pytest test (tests import it by name)
