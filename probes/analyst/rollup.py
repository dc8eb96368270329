"""Roll-up of trial labels per version: counts per model, and which problem labels are the task's.

One trial's label is an opinion about one run; a label is a property of the task only when runs agree:
at least `[analyst] min_agreeing` trials carry it across at least two models, or every trial of a
single-model sweep carries it. A deterministic shortcut (strace or a rule proved it) needs no vote. The
rest is reported as noise, so `decide` and the reviser act on patterns, not on one odd trajectory.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from envqa.core.models import TrialLabel, TrialResult
from envqa.core.registry import NOT_MEASURED, PROBLEM_LABELS  # the label registry

ROLLUP_AGENTS = ("solver",)  # the sweep's trials; the hunter looks for shortcuts on purpose and is counted apart


def rollup(pairs: list[tuple[TrialResult, TrialLabel]], min_agreeing: int) -> dict:
    """{"models", "counts", "subtypes", "consistent", "noise", "problem_labels", "hunter", "unlabeled", ...}."""
    sweep = [(t, lb) for t, lb in pairs if t.agent in ROLLUP_AGENTS]
    hunter = [(t, lb) for t, lb in pairs if t.agent == "hunter"]
    counts: dict[str, Counter] = defaultdict(Counter)
    subtypes: dict[str, Counter] = defaultdict(Counter)
    for t, lb in sweep:
        counts[t.model or "?"][lb.label] += 1
        subtypes[t.model or "?"][f"{lb.label}/{lb.subtype}" if lb.subtype else lb.label] += 1
    measured = [(t, lb) for t, lb in sweep if lb.label not in NOT_MEASURED]
    models = sorted({t.model or "?" for t, _ in measured})
    consistent, noise = [], []
    for label in PROBLEM_LABELS:
        hits = [(t, lb) for t, lb in measured if lb.label == label]
        if not hits:
            continue
        hit_models = sorted({t.model or "?" for t, _ in hits})
        proven = [t.trial_id for t, lb in hits if lb.source == "deterministic"]
        entry = {
            "label": label,
            "trials": len(hits),
            "models": hit_models,
            "subtypes": dict(Counter(lb.subtype for _, lb in hits if lb.subtype).most_common()),
            "trial_ids": [t.trial_id for t, _ in hits],
            "explanations": [lb.explanation[:300] for _, lb in hits[:5]],
        }
        if proven:
            entry["why"] = f"proven by rules or strace on {len(proven)} trial(s)"
        elif len(models) >= 2 and len(hits) >= min_agreeing and len(hit_models) >= 2:
            entry["why"] = f"{len(hits)} trials across {len(hit_models)} models agree (min_agreeing={min_agreeing})"
        elif len(models) == 1 and len(hits) == len(measured):
            entry["why"] = f"every one of the {len(hits)} labelled trial(s) of the single-model sweep"
        else:
            entry["why"] = (
                f"noise: {len(hits)} of {len(measured)} labelled trial(s) from {len(hit_models)} model(s); "
                f"needs >= {min_agreeing} trials across >= 2 models, or all trials of a one-model sweep"
            )
            noise.append(entry)
            continue
        consistent.append(entry)
    unlabeled = [lb for _, lb in sweep if lb.label == "unlabeled"]
    return {
        "min_agreeing": min_agreeing,
        "models": sorted({t.model or "?" for t, _ in sweep}),
        "counts": {m: dict(c) for m, c in sorted(counts.items())},
        "subtypes": {m: dict(c) for m, c in sorted(subtypes.items())},
        "consistent": consistent,
        "noise": noise,
        "problem_labels": [e["label"] for e in consistent],
        "unlabeled": len(unlabeled),
        "unlabeled_reasons": sorted({lb.explanation for lb in unlabeled})[:5],
        "hunter": {
            "trials": len(hunter),
            "counts": dict(Counter(lb.label for _, lb in hunter)),
            "shortcuts": [t.trial_id for t, lb in hunter if lb.label == "shortcut"],
        },
    }
