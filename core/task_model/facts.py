"""The instruction checks' facts about a task (core/consistency/guards.py), with what the tests require read
from the test model: the consistency rules and the instruction fixer read the tests through the one reader.
"""

from __future__ import annotations

from envqa.core.consistency.guards import TaskFacts, facts_with
from envqa.core.environment import Environment
from envqa.core.task_model.model import tests_of


def task_facts(env: Environment) -> TaskFacts:
    """Everything the instruction is held against: the tests' requirements, the image, the oracle's writes."""
    tests = tests_of(env)
    return facts_with(env, tests.requirements, tests.requirements_text)
