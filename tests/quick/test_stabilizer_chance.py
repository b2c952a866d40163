"""No false stabiliser from chance matches: a synthetic step whose outputs repeat by chance
under a partial stabiliser (issue 16: "equally stable with TZ + LC_ALL + HOME", which by
hand gave 9 distinct outputs in 10 runs).

The examples are derandomized: each run draws the same ones, so the test is deterministic.
At the rates drawn, a search reports a false set with a chance below 10^-4 (0.25^10 or
0.6^30 per test, over at most 40 tests); the old rule (3 replays, sized from the plain
replays' rate) reported one here at once ("equally stable with V2 + V3 + V4 + V5")."""

from __future__ import annotations

import itertools
import random
import time
from unittest import mock

import pytest

from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import stats
from fuzzer.explain import stabilizers
from fuzzer.explain.budget import Budget
from fuzzer.execute.step_replay import ReplayOutcome, Variation, decided

NAMES = [f"V{i}" for i in range(9)]


class ChanceStep:
    """Stable when every variable of `works` is fixed. Fixing only part of them (a partial
    stabiliser) leaves outputs that repeat the usual one with probability `partial`; fixing
    none, with probability `base`; any other replay gives new bytes."""

    def __init__(self, works: set[str], partial: float, base: float, rng: random.Random):
        self.works, self.partial, self.base, self.rng = works, partial, base, rng
        self.fresh = itertools.count()

    def replay(self, variation: Variation, times: int, seen: tuple[str, ...] | None = None) -> ReplayOutcome:
        """As the real replayer: with `seen`, a screen that stops once two outputs differ."""
        fixed = set(variation.name.split(" + "))
        repeat = 1.0 if self.works <= fixed else self.partial if self.works & fixed else self.base
        digests: tuple[str, ...] = ()
        while len(digests) < times and not (seen is not None and decided((*seen, *digests))):
            digests += ("usual" if self.rng.random() < repeat else f"new{next(self.fresh)}",)
        return ReplayOutcome(digests, (0,) * len(digests), 0)


@pytest.fixture(autouse=True)
def table(monkeypatch):
    monkeypatch.setattr(stabilizers, "candidates", lambda only=(): [Variation(n) for n in NAMES])


def at_the_floor():
    """Confirmations get CONFIRM_REPLAYS, no more: none of the budget is theirs to spend."""
    return mock.patch.object(stabilizers, "CONFIRM_SHARE", 0.0)


def hour() -> Budget:
    return Budget(time.monotonic() + 3600, 3600, "test")


def _stabilising(found, works: set[str]) -> bool:
    return all(works <= set(s) for s in (found.stabilizers, *found.alternatives) if s)


works_sets = st.sets(st.sampled_from(NAMES), min_size=1, max_size=3)
# a seed, not hypothesis's own randoms: those draw edge values on purpose, and a step that
# repeats "by chance" must repeat at its rate
seeds = st.integers(0, 2**32 - 1).map(random.Random)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(works_sets, st.floats(0.0, 0.6), st.floats(0.0, 1.0), seeds)
def test_no_false_set_with_the_budget_for_the_most_replays(works, partial, base_share, rng):
    found = stabilizers.search(ChanceStep(works, partial, partial * base_share, rng))
    assert _stabilising(found, works), found.describe()
    assert found.replays in (0, stabilizers.MAX_CONFIRM_REPLAYS)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(works_sets, st.floats(0.0, 0.25), seeds)
def test_no_false_set_at_the_fewest_replays_a_claim_takes(works, partial, rng):
    with at_the_floor():
        found = stabilizers.search(ChanceStep(works, partial, partial, rng), budget=hour(), per_replay_s=0.001)
    assert _stabilising(found, works), found.describe()
    assert found.replays in (0, stabilizers.CONFIRM_REPLAYS)


def test_at_the_covered_rate_false_sets_stay_below_one_percent():
    """The claim the report makes, measured: at the smallest rate the search says it
    covers with 10 replays, 2000 searches (fixed seed) call a false set stable less than
    1% of the time (Bonferroni is conservative, so far less)."""
    covered = stats.rate_excluded(stabilizers.CONFIRM_REPLAYS - 1, stabilizers.CHANCE / stabilizers.MAX_TESTS)
    rng, false = random.Random(16), 0
    for _ in range(2000):
        step = ChanceStep({"V1", "V4"}, 1.0 - covered, 1.0 - covered, rng)
        with at_the_floor():
            found = stabilizers.search(step, budget=hour(), per_replay_s=0.001)
        false += not _stabilising(found, {"V1", "V4"})
    assert false < 20


def test_a_partial_stabiliser_seen_identical_by_chance_is_caught_by_its_confirmation():
    """The screen can be fooled (3 identical replays); the confirmation is not, and the
    narrowing goes around the set it proved unstable."""
    screens = iter([("usual",) * 3, ("usual",) * 3])

    class FooledOnce(ChanceStep):
        def replay(self, variation, times, seen=None):
            if variation.name == "V0" and times == stabilizers.SCREEN_REPLAYS:
                return ReplayOutcome(next(screens), (0,) * times, 0)
            return super().replay(variation, times, seen)

    found = stabilizers.search(FooledOnce({"V0", "V1"}, 0.3, 0.0, random.Random(3)))
    assert found.stabilizers == ("V0", "V1")
