"""Assertion records from the verifier's python files (core/task_model/assertions.py). Stub: filled by the reader's
own change."""

from __future__ import annotations

from envqa.core.task_model.assertions import Assertion
from envqa.core.task_model.tests_reader import TestsModel


def python_assertions(tests: TestsModel) -> list[Assertion]:
    """Every check the python test files make."""
    return []
