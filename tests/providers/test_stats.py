"""pass@1 intervals, unbiased pass@k and the adaptive stopping rule, against hand-computed values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from envqa.core.stats import BandDecision, StopRule, band_of_interval, beta_cdf, pass_at_k, summarize, wilson

pytestmark = pytest.mark.fast  # the fast tier (make test-fast): no Docker, Redis or Postgres


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


def test_beta_cdf_matches_closed_forms():
    for x in (0.05, 0.1, 0.3, 0.77):
        assert beta_cdf(x, 1, 1) == pytest.approx(x, abs=1e-12)
        assert beta_cdf(x, 3.5, 1) == pytest.approx(x**3.5, abs=1e-12)
        assert beta_cdf(x, 1, 7) == pytest.approx(1 - (1 - x) ** 7, abs=1e-12)
        # integer parameters: I_x(a, b) = P(Binomial(a + b - 1, x) >= a)
        a, b = 4, 9
        tail = sum(math.comb(a + b - 1, j) * x**j * (1 - x) ** (a + b - 1 - j) for j in range(a, a + b))
        assert beta_cdf(x, a, b) == pytest.approx(tail, abs=1e-12)
    assert beta_cdf(0.5, 0.5, 0.5) == pytest.approx(0.5, abs=1e-12)


def test_stop_rule_stops_on_clear_cases_and_calls_the_likeliest_band():
    rule = StopRule(band=(0.1, 0.3), trial_cost=0.005, prior=0.5, n_min=3, n_max=45, batch=2)
    assert not rule.should_stop(2, 2)  # below n_min, however clear
    assert rule.should_stop(3, 3) and rule.decision(3, 3) == BandDecision.ABOVE
    assert not rule.should_stop(1, 5)  # 20%: could be anywhere yet
    assert not rule.should_stop(0, 9)  # 0/9 is still 16% likely to be inside the band: a few more trials
    assert rule.decision(0, 9) == BandDecision.UNDECIDED
    # n_max: always a call, the most probable band (not a point estimate on a band edge)
    assert rule.should_stop(9, 45) and rule.decision(9, 45) == BandDecision.INSIDE
    assert rule.decision(0, 45) == BandDecision.BELOW and rule.decision(30, 45) == BandDecision.ABOVE
    below, inside, above = rule.posterior(6, 30)
    assert below + inside + above == pytest.approx(1.0) and inside > 0.8


def _exact_expected_loss(s: int, n: int, n_max: int, batch: int, cost: Fraction) -> Fraction:
    """Backward induction written out with a uniform prior in exact arithmetic: P(p <= x | s of n) is
    P(Binomial(n + 1, x) >= s + 1), and j passes in the next k trials have probability
    C(k, j) B(s + 1 + j, n - s + 1 + k - j) / B(s + 1, n - s + 1)."""

    def cdf(x: Fraction) -> Fraction:
        return sum((math.comb(n + 1, j) * x**j * (1 - x) ** (n + 1 - j) for j in range(s + 1, n + 2)), Fraction(0))

    lo, hi = cdf(Fraction(1, 10)), cdf(Fraction(3, 10))
    stop = 1 - max(lo, hi - lo, 1 - hi)
    if n >= n_max:
        return stop

    def beta(a: int, b: int) -> Fraction:
        return Fraction(math.factorial(a - 1) * math.factorial(b - 1), math.factorial(a + b - 1))

    k = min(batch if n else 1, n_max - n)
    go = cost * k + sum(
        math.comb(k, j)
        * beta(s + 1 + j, n - s + 1 + k - j)
        / beta(s + 1, n - s + 1)
        * _exact_expected_loss(s + j, n + k, n_max, batch, cost)
        for j in range(k + 1)
    )
    return min(stop, go)


def test_stop_rule_is_the_bayes_optimal_stop():
    """Stop exactly where stopping costs no more than the best continuation, checked against exact
    arithmetic on a small horizon: a wrong table (a missed batch, a wrong predictive) flips some state."""
    rule = StopRule(band=(0.1, 0.3), trial_cost=0.01, prior=1.0, n_min=1, n_max=9, batch=2)
    checked = 0
    for n in (1, 3, 5, 7):
        for s in range(n + 1):
            lo, inside, hi = rule.posterior(s, n)
            stop = 1 - max(lo, inside, hi)
            k = 2
            go = Fraction(1, 100) * k + sum(
                math.comb(k, j)
                * Fraction(math.factorial(s + j) * math.factorial(n - s + k - j), math.factorial(n + k + 1))
                / Fraction(math.factorial(s) * math.factorial(n - s), math.factorial(n + 1))
                * _exact_expected_loss(s + j, n + k, 9, 2, Fraction(1, 100))
                for j in range(k + 1)
            )
            if abs(stop - float(go)) < 1e-9:
                continue  # a tie: either answer is optimal
            assert rule.should_stop(s, n) == (stop < float(go)), (s, n, stop, float(go))
            checked += 1
    assert checked > 15


def test_summary_reports_interval_and_pass_at_k():
    s = summarize(3, 10, (0.1, 0.3), 0.95, [1, 5])
    assert s.pass_at_1 == 0.3 and s.ci_low < 0.3 < s.ci_high
    assert s.pass_at_k["5"] == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    assert s.band == BandDecision.UNDECIDED
