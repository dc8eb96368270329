"""pass@1 intervals, unbiased pass@k and the adaptive stopping rule, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from envqa.stats import BandDecision, StopRule, band_of_interval, pass_at_k, summarize, wilson


def test_wilson_matches_known_values():
    lo, hi = wilson(0, 10, 0.95)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(5, 10, 0.95)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert wilson(0, 0) == (0.0, 1.0)


def test_unbiased_pass_at_k():
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))  # 0.7
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 7, 5) == 1.0  # fewer than k failures: every k-subset has a pass
    assert pass_at_k(3, 1, 5) is None  # not estimable
    assert pass_at_k(8, 3, 1) == pytest.approx(3 / 8)


def test_band_of_interval():
    band = (0.1, 0.3)
    assert band_of_interval(0.0, 0.09, band) == BandDecision.BELOW
    assert band_of_interval(0.31, 0.9, band) == BandDecision.ABOVE
    assert band_of_interval(0.12, 0.28, band) == BandDecision.INSIDE
    assert band_of_interval(0.05, 0.2, band) == BandDecision.UNDECIDED


def test_stop_rule_stops_early_on_clear_cases_and_at_n_max():
    rule = StopRule(band=(0.1, 0.3), confidence=0.8, n_min=3, n_max=30)
    assert not rule.should_stop(2, 2)  # below n_min
    assert rule.should_stop(3, 3) and rule.decision(3, 3) == BandDecision.ABOVE
    assert not rule.should_stop(1, 5)  # 20%: could be anywhere yet
    # Curtailment: 0 passes in 28 -> at most 2/30 < 10% whatever happens: the fixed-30 call is "below".
    assert rule.decision(0, 28) == BandDecision.BELOW
    assert rule.should_stop(6, 30) and rule.decision(6, 30) == BandDecision.INSIDE


def test_summary_reports_interval_and_pass_at_k():
    s = summarize(3, 10, (0.1, 0.3), 0.95, [1, 5])
    assert s.pass_at_1 == 0.3 and s.ci_low < 0.3 < s.ci_high
    assert s.pass_at_k["5"] == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    assert s.band == BandDecision.UNDECIDED
