"""The error-class registry: every `error_class` a trial or job can end with, and what it means for retries,
for labels and for pass rates. The rows are data, in error_classes.toml next to this module.

`transient`: a trial or job that ended with this class (all we have is its name: a recorded trial, an
InfraError) is worth another try; the scheduler's policy and the probes' trial retries read it. A live
provider exception carries its own `transient` (core/errors.py), which the policy asks first.
`infra`: the machinery failed; False means the class says something about the environment (a verifier
that writes no reward, an image that does not build) and the trial is labelled brittleness.
`counts_in_pass_rate`: every error class ends a trial as outcome `infra`, which no pass rate counts.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal


@dataclass(frozen=True)
class ErrorClass:
    name: str
    source: Literal["sandbox", "build", "verifier", "agent", "provider", "scheduler", "store"]
    transient: bool
    infra: bool
    description: str
    counts_in_pass_rate: bool = False


DATA = Path(__file__).with_name("error_classes.toml")


def _load() -> tuple[ErrorClass, ...]:
    """The classes of error_classes.toml, in order; a malformed row fails here, at import."""
    try:
        return tuple(ErrorClass(**row) for row in tomllib.loads(DATA.read_text())["error_class"])
    except (TypeError, KeyError) as e:
        raise ValueError(f"{DATA}: an [[error_class]] row is malformed: {e}") from None


ERROR_CLASSES: tuple[ErrorClass, ...] = _load()
ERROR_CLASS_INFO = MappingProxyType({c.name: c for c in ERROR_CLASSES})

# Infra error classes worth another try: the machinery hiccuped (core/policy.py, probes, trial jobs).
TRANSIENT_INFRA: frozenset[str] = frozenset(c.name for c in ERROR_CLASSES if c.transient)
# Error classes that say something about the environment rather than about our machinery.
ENVIRONMENT_ERRORS: frozenset[str] = frozenset(c.name for c in ERROR_CLASSES if not c.infra)
VERIFIER_ERRORS: tuple[str, ...] = tuple(c.name for c in ERROR_CLASSES if c.source == "verifier")
BUILD_ERRORS: tuple[str, ...] = tuple(c.name for c in ERROR_CLASSES if c.source == "build")
