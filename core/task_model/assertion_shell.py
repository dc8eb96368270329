"""Assertion records from the verifier's shell files (core/task_model/assertions.py). Stub: filled by the reader's
own change."""

from __future__ import annotations

from envqa.core.task_model.assertions import Assertion
from envqa.core.task_model.tests_reader import TestsModel


def shell_assertions(tests: TestsModel) -> list[Assertion]:
    """Every check the shell test files make."""
    return []
