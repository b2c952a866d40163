"""Exact binomial statistics for claims drawn from repeated trials.

A claim that rests on repeated replays or builds is a statement about a rate: "k of k
replays identical" bounds the rate at which the step still varies, "3 of 12 builds
failed" bounds the failure rate. Everything here is exact (Clopper–Pearson), not a
normal approximation: the counts are small, and the zero-count case is the one that
matters most.
"""

from __future__ import annotations

import math

CONFIDENCE = 0.95


def binomial_cdf(x: int, n: int, p: float) -> float:
    """P(X ≤ x) for X ~ Binomial(n, p)."""
    if x < 0:
        return 0.0
    if x >= n:
        return 1.0
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(x + 1))


def upper_bound_zero(n: int, confidence: float = CONFIDENCE) -> float:
    """The exact (Clopper–Pearson) upper bound on a rate seen 0 times in n trials: the
    largest p with (1 - p)^n ≥ 1 - confidence. About 3/n at 95% (the rule of three)."""
    if n <= 0:
        return 1.0
    return 1.0 - (1.0 - confidence) ** (1.0 / n)


def trials_for_bound(rate: float, chance: float) -> int:
    """The fewest trials n such that an event of `rate` or more is absent from all n with a
    chance of at most `chance`: (1 - rate)^n ≤ chance."""
    if not 0 < rate <= 1 or not 0 < chance < 1:
        raise ValueError(f"rate {rate} and chance {chance} must be in (0, 1]")
    if rate == 1:
        return 1
    return max(1, math.ceil(math.log(chance) / math.log1p(-rate)))


def rate_excluded(n: int, chance: float) -> float:
    """The smallest rate that n trials without the event rule out with that chance: a rate
    at least this large shows at least once in n trials but for `chance`."""
    return upper_bound_zero(n, 1.0 - chance)


def interval(x: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact (Clopper–Pearson) two-sided interval for a rate seen x times in n trials."""
    if not 0 <= x <= n or n <= 0:
        raise ValueError(f"{x} of {n} is not a count")
    tail = (1.0 - confidence) / 2
    low = 0.0 if x == 0 else _solve(lambda p: 1.0 - binomial_cdf(x - 1, n, p) - tail)
    high = 1.0 if x == n else _solve(lambda p: tail - binomial_cdf(x, n, p))
    return low, high


def _solve(increasing, steps: int = 60) -> float:
    """The root in [0, 1] of a function that increases with p (bisection: exact enough
    after 60 halvings, and the binomial tails are monotone in p)."""
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        if increasing(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def percent_above(p: float) -> str:
    """A bound as a reader checks it: rounded up, never down."""
    return f"{math.ceil(p * 100 - 1e-9):.0f}%"


def percent(p: float) -> str:
    """A rate for reading: one decimal below 10%, whole percents above."""
    return f"{p * 100:.1f}%" if p < 0.1 else f"{p * 100:.0f}%"


def rate_text(x: int, n: int, confidence: float = CONFIDENCE) -> str:
    """"x of n builds (95% interval a–b)", the exact interval of `interval`."""
    low, high = interval(x, n, confidence)
    return f"{x} of {n} builds ({confidence:.0%} interval {percent(low)}–{percent(high)})"


def clean_builds_for_bound(rate: float, confidence: float = CONFIDENCE) -> int:
    """The fewest builds without the event whose exact bound `upper_bound_zero` is at most
    `rate`: 59 for 5% at 95%."""
    return trials_for_bound(rate, 1.0 - confidence)


def tries_to_tell(rate: float, wrong: float) -> int:
    """Tries at one commit so that a bug showing at `rate` per try is missed with a chance
    of at most `wrong` (a bisection step judged clean when it is not)."""
    return trials_for_bound(min(max(rate, 1e-9), 1.0), wrong)


def percent_above_tenth(p: float) -> str:
    """A bound to a tenth of a percent, rounded up: 1 - 0.05^(1/12) = 22.09% reads 22.1%."""
    return f"{math.ceil(p * 1000 - 1e-9) / 10:.1f}%"
