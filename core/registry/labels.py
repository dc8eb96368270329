"""The label registry: every label a trial (or a finding) can carry, its subtypes and the flags the loop reads.

One table (labels.toml, data next to this module), read by the analyst (the taxonomy it is given and checked against),
the deterministic labeller, decide (which failures mean the task is broken), the roll-up (which labels are problems),
the gate (which passes a patch need not keep) and the HTML report (colours). Every other name for these facts
(`Label`, `TRIAL_LABELS`, `MODEL_TAXONOMY`, `PASS_LABELS`, ...) is derived here, so adding a label or a subtype is one
edit.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from enum import EnumMeta, StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal


@dataclass(frozen=True)
class LabelInfo:
    """One label. `outcome`: the trial outcome it can describe (None: any, decided by the machinery)."""

    name: str
    means: str  # one line, as docs/guide/labels.md's table says it
    color: str  # the HTML report's swatch
    outcome: Literal["pass", "fail"] | None
    problem: bool  # a property of the task a revision should fix (the roll-up's problem labels)
    failure_means_broken: bool = False  # decide: failures with this label say the task is broken, not hard
    counts_in_pass_rate: bool = True  # infra and unlabeled trials are not measurements
    keep_on_regrade: bool = True  # the gate replays the parent's solver passes with this label
    model_subtypes: dict[str, str] = field(default_factory=dict)  # the analyst may choose these
    rule_subtypes: dict[str, str] = field(default_factory=dict)  # only the deterministic rules assign these


DATA = Path(__file__).with_name("labels.toml")


def _load() -> tuple[LabelInfo, ...]:
    """The labels of labels.toml, in order (no `outcome`: any outcome); a malformed row fails here, at import."""
    try:
        return tuple(LabelInfo(**{"outcome": None, **row}) for row in tomllib.loads(DATA.read_text())["label"])
    except (TypeError, KeyError) as e:
        raise ValueError(f"{DATA}: a [[label]] row is malformed: {e}") from None


LABELS: tuple[LabelInfo, ...] = _load()
LABEL_INFO = MappingProxyType({info.name: info for info in LABELS})

# What a finding (or a trial) is labelled; `Label.SHORTCUT == "shortcut"`. Built from the table above.
if TYPE_CHECKING:  # the members come from labels.toml, which a type checker does not read: any name is a Label

    class _LabelMeta(EnumMeta):
        def __getattr__(cls, name: str) -> Label: ...

    class Label(StrEnum, metaclass=_LabelMeta): ...
else:
    Label = StrEnum("Label", {info.name.upper(): info.name for info in LABELS})
Label.__doc__ = "What a failure (or a suspicious pass) means; DESIGN.md defines each (core/registry/labels.py)."
Label.__module__ = __name__

TRIAL_LABELS: tuple[str, ...] = tuple(LABEL_INFO)
# The analyst's taxonomy: label -> {subtype: meaning}, only the labels a model may choose.
MODEL_TAXONOMY: dict[str, dict[str, str]] = {i.name: dict(i.model_subtypes) for i in LABELS if i.model_subtypes}
DETERMINISTIC_SUBTYPES: dict[str, dict[str, str]] = {i.name: dict(i.rule_subtypes) for i in LABELS if i.rule_subtypes}


def _for_outcome(outcome: str) -> tuple[str, ...]:
    # The honest reading first (legitimate before shortcut, capability before the problem labels).
    return tuple(i.name for i in sorted((i for i in LABELS if i.outcome == outcome), key=lambda i: i.problem))


PASS_LABELS = _for_outcome("pass")
FAIL_LABELS = _for_outcome("fail")
PROBLEM_LABELS = tuple(i.name for i in LABELS if i.problem)
FAILURE_MEANS_BROKEN = tuple(i.name for i in LABELS if i.failure_means_broken)
NOT_MEASURED = tuple(i.name for i in LABELS if not i.counts_in_pass_rate)
SKIP_ON_REGRADE = frozenset(i.name for i in LABELS if not i.keep_on_regrade)
LABEL_COLORS: dict[str, str] = {i.name: i.color for i in LABELS}
