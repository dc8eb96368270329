"""Pass-rate statistics: pass@1 with a Wilson interval, unbiased pass@k, and the adaptive stopping rule.

Why Wilson: it stays inside [0, 1] and behaves at 0/n and n/n, where the normal approximation
collapses to a zero-width interval after a handful of trials. pass@k is the unbiased estimator of Chen
et al. (2021): 1 - C(n-c, k) / C(n, k) for c passes in n trials.
"""

from __future__ import annotations

import functools
import math
from enum import StrEnum
from statistics import NormalDist

from pydantic import BaseModel


class BandDecision(StrEnum):
    BELOW = "below"
    INSIDE = "inside"
    ABOVE = "above"
    UNDECIDED = "undecided"


def z_for(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(passes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    z = z_for(confidence)
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k; None when k > n (not estimable from n trials)."""
    if k > n or n == 0:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def band_of_interval(lo: float, hi: float, band: tuple[float, float]) -> BandDecision:
    low, high = band
    if hi < low:
        return BandDecision.BELOW
    if lo > high:
        return BandDecision.ABOVE
    if lo >= low and hi <= high:
        return BandDecision.INSIDE
    return BandDecision.UNDECIDED


def band_of_point(p: float, band: tuple[float, float]) -> BandDecision:
    """The decision a fixed-n sweep makes from its point estimate."""
    low, high = band
    return BandDecision.BELOW if p < low else BandDecision.ABOVE if p > high else BandDecision.INSIDE


class PassStats(BaseModel):
    n: int
    passes: int
    pass_at_1: float | None
    ci_low: float
    ci_high: float
    confidence: float
    pass_at_k: dict[str, float | None]
    band: BandDecision


def summarize(passes: int, n: int, band: tuple[float, float], confidence: float, ks: list[int]) -> PassStats:
    lo, hi = wilson(passes, n, confidence)
    return PassStats(
        n=n,
        passes=passes,
        pass_at_1=passes / n if n else None,
        ci_low=round(lo, 4),
        ci_high=round(hi, 4),
        confidence=confidence,
        pass_at_k={str(k): pass_at_k(n, passes, k) for k in ks},
        band=band_of_interval(lo, hi, band) if n else BandDecision.UNDECIDED,
    )


def beta_cdf(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b): P(p <= x) for p ~ Beta(a, b). A continued fraction
    (Lentz), accurate to ~1e-12 for the small parameters a sweep produces; no SciPy for one function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300

    def nz(v: float) -> float:
        return v if abs(v) > tiny else tiny

    c, d = 1.0, 1.0 / nz(1.0 - (a + b) * x / (a + 1))
    h = d
    for m in range(1, 400):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 / nz(1.0 + num * d)
            c = nz(1.0 + num / c)
            h *= d * c
        if abs(d * c - 1.0) < 3e-14:
            break
    return h


BANDS = (BandDecision.BELOW, BandDecision.INSIDE, BandDecision.ABOVE)


class StopRule(BaseModel):
    """Adaptive trials: when may a model's sweep stop, and what band does it then call?

    A Bayesian sequential decision. The pass rate p has a Beta(prior, prior) prior; after `passes` of `n`
    its posterior gives the probability of each band. Stopping now costs the chance that the most probable
    band is wrong; going on costs `trial_cost` per trial (the price of one trial in units of a wrong call)
    plus the expected cost of deciding after the next batch (one probe trial first, then `batch` trials,
    as the sweep schedules them). The rule stops when stopping is no dearer than going on, which backward
    induction over the reachable (passes, n) up to n_max computes exactly; it never stops before n_min.
    The call is always the most probable band, at n_max too. The Wilson-interval test this replaces read
    the same data worse: it stopped only once an interval cleared a band edge, spending trials on clear
    cases, and called borderline ones from a point estimate. benchmarks/adaptive.py scores the rule
    against each task's true band; the defaults come from its tuning seeds.
    """

    band: tuple[float, float] = (0.10, 0.30)
    trial_cost: float = 0.0055
    prior: float = 0.5  # Beta(0.5, 0.5), Jeffreys: no preferred pass rate, some weight on never/always
    n_min: int = 3
    n_max: int = 90
    batch: int = 2

    def posterior(self, passes: int, n: int) -> tuple[float, float, float]:
        """P(below), P(inside), P(above) the band given `passes` of `n`."""
        return _posterior(self.band, self.prior, passes, n)

    def decided(self, passes: int, n: int) -> BandDecision | None:
        """The band call if the sweep may stop now, else None."""
        if n >= self.n_max or (n >= self.n_min and _stops(self._key(), passes, n)):
            return self._call(passes, n)
        return None

    def should_stop(self, passes: int, n: int) -> bool:
        return self.decided(passes, n) is not None

    def decision(self, passes: int, n: int) -> BandDecision:
        """The call after stopping (UNDECIDED if asked before the rule allows a stop)."""
        return self.decided(passes, n) or BandDecision.UNDECIDED

    def _call(self, passes: int, n: int) -> BandDecision:
        post = self.posterior(passes, n)
        return BANDS[max(range(3), key=post.__getitem__)]

    def _key(self) -> tuple:
        return (self.band, self.prior, self.trial_cost, self.n_min, self.n_max, self.batch)


@functools.lru_cache(maxsize=65536)
def _posterior(band: tuple[float, float], prior: float, passes: int, n: int) -> tuple[float, float, float]:
    a, b = prior + passes, prior + n - passes
    below, not_above = beta_cdf(band[0], a, b), beta_cdf(band[1], a, b)
    return below, not_above - below, 1.0 - not_above


@functools.cache
def _expected_loss(key: tuple, passes: int, n: int) -> float:
    """The least expected cost from (passes, n) on: stop now, or pay for the next batch and decide then."""
    stop = 1.0 - max(_posterior(key[0], key[1], passes, n))
    if n >= key[4]:
        return stop
    go = _continue_cost(key, passes, n)
    return go if n < key[3] else min(stop, go)


def _continue_cost(key: tuple, passes: int, n: int) -> float:
    band, prior, cost, _n_min, n_max, batch = key
    k = min(batch if n else 1, n_max - n)  # the sweep's schedule: one probe trial, then `batch` at a time
    a, b = prior + passes, prior + n - passes
    norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) - math.lgamma(a + b + k)
    total = 0.0
    for j in range(k + 1):  # beta-binomial: j passes among the next k trials
        total += (
            math.comb(k, j)
            * math.exp(norm + math.lgamma(a + j) + math.lgamma(b + k - j))
            * _expected_loss(key, passes + j, n + k)
        )
    return cost * k + total


def _schedule(key: tuple, n: int) -> list[int]:
    """The trial counts at which the sweep checks again after n, up to n_max."""
    n_max, batch, points = key[4], key[5], []
    while n < n_max:
        n = min(n + (batch if n else 1), n_max)
        points.append(n)
    return points


@functools.cache
def _fill(key: tuple, n: int) -> None:
    """Fill the table from n_max back to n once, so that no lookup recurses deeply (a big n_max)."""
    for m in reversed(_schedule(key, n)):
        for s in range(m + 1):
            _expected_loss(key, s, m)


def _stops(key: tuple, passes: int, n: int) -> bool:
    band, prior = key[0], key[1]
    _fill(key, n)
    return 1.0 - max(_posterior(band, prior, passes, n)) <= _continue_cost(key, passes, n)
