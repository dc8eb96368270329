"""Pass-rate statistics: pass@1 with a Wilson interval, unbiased pass@k, and the adaptive stopping rule.

Why Wilson: it stays inside [0, 1] and behaves at 0/n and n/n, where the normal approximation
collapses to a zero-width interval after a handful of trials. pass@k is the unbiased estimator of Chen
et al. (2021): 1 - C(n-c, k) / C(n, k) for c passes in n trials.
"""

from __future__ import annotations

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
    return PassStats(n=n, passes=passes, pass_at_1=passes / n if n else None, ci_low=round(lo, 4),
                     ci_high=round(hi, 4), confidence=confidence,
                     pass_at_k={str(k): pass_at_k(n, passes, k) for k in ks},
                     band=band_of_interval(lo, hi, band) if n else BandDecision.UNDECIDED)


class StopRule(BaseModel):
    """Adaptive trials: when may a model's sweep stop, and what band does it then call?

    Stop as soon as (a) the Wilson interval lies wholly below, inside or above the band (after n_min
    trials), or (b) the call a fixed n_max sweep would make from its point estimate can no longer change
    whatever the remaining trials do (curtailment), or (c) at n_max. benchmarks/adaptive.py measures
    the agreement with a fixed n_max sweep and the share of trials this saves.
    """

    band: tuple[float, float] = (0.10, 0.30)
    confidence: float = 0.80
    n_min: int = 3
    n_max: int = 30

    def decided(self, passes: int, n: int) -> BandDecision | None:
        """The band call if the sweep may stop now, else None."""
        if n >= self.n_max:
            return band_of_point(passes / n, self.band) if n else BandDecision.UNDECIDED
        if n >= self.n_min:
            d = band_of_interval(*wilson(passes, n, self.confidence), self.band)
            if d != BandDecision.UNDECIDED:
                return d
        if n > 0:
            worst = band_of_point(passes / self.n_max, self.band)
            best = band_of_point((passes + self.n_max - n) / self.n_max, self.band)
            if worst == best:
                return worst
        return None

    def should_stop(self, passes: int, n: int) -> bool:
        return self.decided(passes, n) is not None

    def decision(self, passes: int, n: int) -> BandDecision:
        """The call after stopping (UNDECIDED if asked before the rule allows a stop)."""
        return self.decided(passes, n) or BandDecision.UNDECIDED
