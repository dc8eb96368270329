"""decide's rules on real sweep documents (graphs/sweep.sweep_report's shape): which request, or none."""

from __future__ import annotations

import pytest

from envqa.core.models import TrialLabel, TrialResult
from envqa.core.stats import summarize, wilson
from envqa.graphs.decide import band_measure, open_findings, revision_request
from envqa.graphs.loop_report import verdict_of
from envqa.probes.analyst.rollup import rollup

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


def sweep(per_model: dict[str, tuple[int, int]], band=(0.10, 0.30)) -> dict:
    """A sweep report as graphs/sweep.py writes it: per model (passes, n), pooled, with Wilson intervals."""
    models = {}
    for m, (passes, n) in per_model.items():
        s = summarize(passes, n, band, 0.95, [1])
        models[m] = {**s.model_dump(mode="json"), "trials": n, "infra": 0}
    n = sum(n for _, n in per_model.values())
    passes = sum(p for p, _ in per_model.values())
    lo, hi = wilson(passes, n, 0.95)
    return {
        "band": list(band),
        "models": models,
        "overall": {
            "n": n,
            "passes": passes,
            "pass_at_1": passes / n if n else None,
            "ci_low": round(lo, 4),
            "ci_high": round(hi, 4),
        },
    }


FINDING = {"rule": "exploit-reward-tamper", "label": "shortcut", "severity": "critical", "message": "m"}
INFO = {"rule": "root-agent", "label": "brittleness", "severity": "info", "message": "m"}


def test_open_findings_come_first_and_info_is_not_open():
    band = band_measure(sweep({"a": (1, 5)}))
    req = revision_request(open_findings([FINDING, INFO]), band, {})
    assert req.kind == "fix_findings" and "exploit-reward-tamper" in req.detail and "root-agent" not in req.detail
    assert revision_request(open_findings([INFO]), band, {}) is None  # 0.2 is in band, info is not a finding


def test_every_model_passing_is_too_easy_with_the_interval_in_the_detail():
    band = band_measure(sweep({"a": (3, 3), "b": (3, 3)}))
    assert (band["call"], band["in_band"]) == ("above", False)
    assert band["models"]["a"]["call"] == "above" and band["pooled"]["ci_low"] > 0.5
    req = revision_request([], band, {})
    assert req.kind == "too_easy" and "every model passed" in req.detail and "6/6" in req.detail


def test_one_strong_and_one_hopeless_model_is_not_clean():
    """The issue's report: 3/3 and 0/3 gave "verdict clean". Pooled 0.5 is above a 10-30% band."""
    band = band_measure(sweep({"good": (3, 3), "bad": (0, 3)}))
    assert band["call"] == "above" and band["in_band"] is False
    assert revision_request([], band, {}).kind == "too_easy"
    assert verdict_of([], [], band["in_band"]) == "out_of_band"


@pytest.mark.parametrize(
    "labels, kind",
    [
        ({"ambiguity": 4, "capability": 1}, "broken"),
        ({"brittleness": 3}, "broken"),
        ({"capability": 5}, "too_hard"),
        ({"ambiguity": 1, "capability": 3}, "too_hard"),
    ],
)
def test_all_failing_is_broken_or_too_hard_by_the_failure_labels(labels, kind):
    band = band_measure(sweep({"a": (0, 3), "b": (0, 2)}))
    assert band["call"] == "below"
    assert revision_request([], band, labels).kind == kind


def test_in_band_and_unmeasured_need_nothing():
    assert revision_request([], band_measure(sweep({"a": (1, 5)})), {}) is None
    unmeasured = band_measure(None)
    assert unmeasured == {"measured": False, "in_band": None, "call": "unmeasured", "models": {}}
    assert revision_request([], unmeasured, {}) is None
    assert verdict_of([], [], None) == "clean" and verdict_of([], ["x"], True) == "incomplete"


def _labelled(labels: list[tuple[str, str]], min_agreeing: int = 2) -> dict:
    """The roll-up (probes/analyst/rollup.rollup) of failed sweep trials labelled (model, label) by a model."""
    pairs = [
        (
            TrialResult(
                trial_id=f"t{i}", run_id="r", env_version="v", agent="solver", model=m, purpose="sweep", outcome="fail"
            ),
            TrialLabel(trial_id=f"t{i}", label=lb, subtype="", source="model:x"),
        )
        for i, (m, lb) in enumerate(labels)
    ]
    return rollup(pairs, min_agreeing)


def test_the_label_rollup_decides_what_counts_as_the_tasks_problem():
    """Issue 11: a problem label is the task's only when the roll-up calls it consistent; noise is not."""
    below = band_measure(sweep({"a": (0, 3), "b": (0, 2)}))
    # 4 of 5 failures say ambiguity, but all from one model of two: noise, so the task is only too hard.
    noisy = _labelled([("a", "ambiguity")] * 3 + [("b", "capability")] * 2 + [("a", "ambiguity")], min_agreeing=2)
    assert [e["label"] for e in noisy["noise"]] == ["ambiguity"] and not noisy["consistent"]
    req = revision_request([], below, {"ambiguity": 4, "capability": 2}, noisy)
    assert req.kind == "too_hard" and "ambiguity only as noise" in req.detail, req
    # The same counts with both models agreeing: broken, and the detail says why.
    agreed = _labelled([("a", "ambiguity")] * 2 + [("b", "ambiguity")] * 2 + [("b", "capability")])
    req = revision_request([], below, {"ambiguity": 4, "capability": 1}, agreed)
    assert req.kind == "broken" and "the traces agree on ambiguity" in req.detail, req
    # In band, yet the traces agree on ambiguity: still a revision request (no ambiguity left open).
    in_band = band_measure(sweep({"a": (1, 5), "b": (1, 5)}))
    req = revision_request([], in_band, {"ambiguity": 4}, agreed)
    assert req.kind == "fix_labels" and "ambiguity (4 trials across 2 models agree" in req.detail, req
    assert revision_request([], in_band, {"ambiguity": 4}, noisy) is None
