"""The label taxonomy: each label's subtypes, what a subtype means, and which outcomes it can describe.

One table (the label registry, core/registry/labels.py) serves the analyst's prompt (the decision
procedure it follows), the checker (a subtype the table does not know, or a label that cannot describe
the trial's outcome, is sent back for repair), the benchmark and docs/guide/labels.md. Deterministic-only subtypes
(infra classes, probe trials) are not offered to the model.
"""

from __future__ import annotations

from envqa.core.registry import DETERMINISTIC_SUBTYPES, FAIL_LABELS, MODEL_TAXONOMY, PASS_LABELS

# label -> {subtype: meaning}: the analyst's choices; DETERMINISTIC_SUBTYPES only the rules assign. Both,
# and the labels an outcome allows, are derived from the label registry (core/registry/labels.py).
__all__ = [
    "DETERMINISTIC_SUBTYPES",
    "FAIL_LABELS",
    "MODEL_TAXONOMY",
    "PASS_LABELS",
    "labels_for_outcome",
    "problems_with",
]


def labels_for_outcome(outcome: str) -> tuple[str, ...]:
    return PASS_LABELS if outcome == "pass" else FAIL_LABELS


def problems_with(label: str, subtype: str, outcome: str) -> list[str]:
    """What is wrong with a model's (label, subtype) for a trial with this outcome (empty: fine)."""
    allowed = labels_for_outcome(outcome)
    if label not in allowed:
        return [
            f"label {label!r} cannot describe a trial whose outcome is {outcome}; choose one of {', '.join(allowed)}"
        ]
    if subtype not in MODEL_TAXONOMY[label]:
        return [f"subtype {subtype!r} is not a subtype of {label}; choose one of {', '.join(MODEL_TAXONOMY[label])}"]
    return []
