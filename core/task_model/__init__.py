"""The task model: one per version, built once per process from the version's files (model.py), with the one
reader of the verifier's tests (tests_reader.py) and its facets (cases.py, checks.py, thresholds.py,
timing.py, vacuity.py) and what the task fetches from outside (fetches.py: `model_of(env).fetches`,
`pinned_packages(model)`). Rules ask `model_of(env)` / `tests_of(env)`; none opens or parses a test file itself.
"""

from envqa.core.task_model.fetches import Fetch, Pin, pinned_packages
from envqa.core.task_model.model import MODELS, TaskModel, model_of, tests_of
from envqa.core.task_model.tests_reader import TestsModel

__all__ = ["MODELS", "Fetch", "Pin", "TaskModel", "TestsModel", "model_of", "pinned_packages", "tests_of"]
