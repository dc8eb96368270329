"""The instruction checks' facts about a task (core/consistency/guards.py), with what the tests require read
from the test model: the consistency rules and the instruction fixer read the tests through the one reader.
"""

from __future__ import annotations

from dataclasses import replace

from envqa.core.consistency.compare import Mismatch, mismatches
from envqa.core.consistency.guards import TaskFacts, facts_with
from envqa.core.environment import Environment
from envqa.core.task_model.model import model_of, tests_of
from envqa.core.task_model.tested_terms import (
    checked_paths,
    compared_requirements,
    database_requirements,
    flag_key_mismatches,
)


def task_facts(env: Environment) -> TaskFacts:
    """Everything the instruction is held against: the tests' requirements, the image, the oracle's writes."""
    tests = tests_of(env)
    return facts_with(env, tests.requirements, tests.requirements_text)


def instruction_mismatches(env: Environment) -> tuple[TaskFacts, list[Mismatch]]:
    """The instruction held against the tests: the paths, names and spellings the test model's requirements show
    (core/consistency/compare.py), with the literals every check of the assertion model compares, the files it
    reads and the databases it pins (any language, resolved through helpers, fixtures and unittest methods), and
    the flags and keys those checks require (core/task_model/tested_terms.py). One list for the rules
    (probes/static/instruction_rules.py) and the instruction fixer alike."""
    facts = task_facts(env)
    model = model_of(env)
    records = model.assertions.assertions
    extra = compared_requirements(records) + database_requirements(records) + checked_paths(records)
    # in the order the tests make them, so each mismatch cites the first line that requires its literal
    requirements = sorted(facts.requirements + extra, key=lambda r: (r.file, r.line))
    found = mismatches(replace(facts, requirements=requirements))
    seen = {m.key() for m in found}
    for m in flag_key_mismatches(env, facts, records, model.provenance):
        if m.key() not in seen:
            seen.add(m.key())
            found.append(m)
    return facts, found
