"""Exact binomial bounds: checked against closed forms and published values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuzzer import stats


def test_zero_of_n_is_the_rule_of_three_made_exact():
    assert stats.upper_bound_zero(29) == pytest.approx(0.0981, abs=1e-4)  # 1 - 0.05^(1/29)
    assert stats.upper_bound_zero(11) == pytest.approx(0.2384, abs=1e-4)
    for n in (10, 30, 100):
        assert stats.upper_bound_zero(n) < 3 / n
    assert stats.upper_bound_zero(0) == 1.0


def test_trials_for_a_bound_are_the_fewest_that_suffice():
    n = stats.trials_for_bound(0.25, 0.01)
    assert 0.75**n <= 0.01 < 0.75 ** (n - 1)
    assert stats.trials_for_bound(1.0, 0.5) == 1
    with pytest.raises(ValueError):
        stats.trials_for_bound(0.0, 0.01)


@given(st.integers(1, 60), st.floats(1e-6, 0.5))
def test_the_excluded_rate_and_the_trials_needed_agree(n, chance):
    rate = stats.rate_excluded(n, chance)
    assert (1 - rate) ** n == pytest.approx(chance, rel=1e-6)
    assert stats.trials_for_bound(min(rate * 1.0001, 1.0), chance) <= n


def test_clopper_pearson_matches_published_values():
    # 3 of 12 at 95%: [0.0549, 0.5719] (exact binomial interval, as R's binom.test gives)
    low, high = stats.interval(3, 12)
    assert low == pytest.approx(0.0549, abs=1e-4) and high == pytest.approx(0.5719, abs=1e-4)
    assert stats.interval(0, 12)[0] == 0.0
    assert stats.interval(0, 12)[1] == pytest.approx(1 - 0.025 ** (1 / 12), abs=1e-9)
    assert stats.interval(12, 12) == (pytest.approx(0.025 ** (1 / 12), abs=1e-9), 1.0)
    with pytest.raises(ValueError):
        stats.interval(5, 4)


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_the_interval_holds_the_observed_rate(counts):
    x, n = counts
    low, high = stats.interval(x, n)
    assert 0 <= low <= x / n <= high <= 1


def test_bounds_are_printed_rounded_up():
    assert stats.percent_above(0.0981) == "10%" and stats.percent_above(0.25) == "25%"
