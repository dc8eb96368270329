"""Builds a version's assertion model (core/task_model/assertions.py) from the test model's files, once.

Three readers, one per kind of test file, each returning records of the same shape:
- core/task_model/assertion_python.py: pytest and unittest tests and plain Python scripts, through helpers,
  fixtures, constants, `parametrize`, loops and local imports;
- core/task_model/assertion_shell.py: test.sh's conditions and the commands whose status decides the reward;
- core/task_model/assertion_compiled.py: test files of other languages that test.sh builds and runs.
A reference file a check compares with is then given its origin (image, tests, solution, agent) from the
provenance model, so a rule asks one record and never the Dockerfile.
"""

from __future__ import annotations

from envqa.core.task_model.assertion_compiled import compiled_assertions
from envqa.core.task_model.assertion_python import python_assertions
from envqa.core.task_model.assertion_shell import shell_assertions
from envqa.core.task_model.assertions import Assertion, AssertionModel
from envqa.core.task_model.provenance import Provenance
from envqa.core.task_model.tests_reader import TestsModel


def _with_origin(a: Assertion, provenance: Provenance | None) -> Assertion:
    """The reference file's origin from the provenance model, where the reader left it open."""
    path = a.expected.path
    if provenance is None or not path or a.expected.origin not in (None, "unknown"):
        return a
    origin = provenance.origin(path).kind
    return a.model_copy(update={"expected": a.expected.model_copy(update={"origin": origin})})


def read_assertions(tests: TestsModel, provenance: Provenance | None = None) -> AssertionModel:
    """Every check of the verifier: Python, then the entry script, then compiled test files."""
    records: list[Assertion] = []
    unread: list[str] = []
    records += python_assertions(tests)
    records += shell_assertions(tests)
    compiled, not_read = compiled_assertions(tests)
    records += compiled
    unread += not_read
    return AssertionModel(assertions=[_with_origin(a, provenance) for a in records], unread=unread)
