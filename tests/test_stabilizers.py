"""Stabiliser search: group testing over the candidate table, against an oracle that knows
which sets of variables make a step stable."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.explain import stabilizers
from fuzzer.execute.step_replay import ReplayOutcome, Variation

NAMES = [f"V{i}" for i in range(9)]


class OracleReplayer:
    """Stable iff the fixed variables include one of `works` (each a set fixed together)."""

    def __init__(self, works: list[set[str]], fails_with: set[str] = frozenset()):
        self.works, self.fails_with, self.tests = works, fails_with, 0
        self.counter = itertools.count()

    def replay(self, variation: Variation, times: int) -> ReplayOutcome:
        self.tests += 1
        fixed = set(variation.name.split(" + "))
        if fixed & self.fails_with:
            return ReplayOutcome(("x",) * times, (1,) * times, 0, "exited 1: HOME is not writable")
        stable = any(w <= fixed for w in self.works)
        digests = ("same",) * times if stable else tuple(f"d{next(self.counter)}" for _ in range(times))
        return ReplayOutcome(digests, (0,) * times, 0)


@pytest.fixture(autouse=True)
def table(monkeypatch):
    monkeypatch.setattr(stabilizers, "candidates", lambda: [Variation(n) for n in NAMES])


def plain(distinct: int, n: int = 5) -> ReplayOutcome:
    return ReplayOutcome(tuple(f"d{i % distinct}" for i in range(n)), (0,) * n, 0)


@settings(max_examples=80, deadline=None)
@given(st.sets(st.sampled_from(NAMES), min_size=1, max_size=3))
def test_the_answer_is_a_minimal_stabilising_set(needed):
    replayer = OracleReplayer([needed])
    found = stabilizers.search(replayer, plain(5))
    assert set(found.stabilizers) == needed and not found.alternatives
    # group testing: about k·log n tests, far below trying every pair (36) or triple (84)
    assert replayer.tests <= 2 + 2 * len(needed) * math.ceil(math.log2(len(NAMES)))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(NAMES), min_size=2, max_size=3, unique=True))
def test_single_stabilisers_that_each_work_are_alternatives_never_a_union(singles):
    found = stabilizers.search(OracleReplayer([{n} for n in singles]), plain(5))
    reported = [found.stabilizers, *found.alternatives]
    assert all(len(s) == 1 for s in reported)
    assert sorted(s[0] for s in reported) == sorted(singles)
    assert found.stabilizers == (min(singles, key=NAMES.index),)  # the table's order decides which comes first


def test_no_known_stabiliser_is_said_after_one_test():
    replayer = OracleReplayer([{"NOT-A-CANDIDATE"}])
    found = stabilizers.search(replayer, plain(5))
    assert found.stabilizers == () and replayer.tests == 1
    assert "no known stabiliser" in found.describe()


def test_a_failing_replay_is_no_stability():
    found = stabilizers.search(OracleReplayer([{"V1"}], fails_with={"V7"}), plain(5))
    assert found.stabilizers == () and "HOME is not writable" in found.describe()


@given(st.lists(st.integers(0, 4), min_size=2, max_size=12))
def test_confirmation_keeps_a_chance_match_below_one_percent(labels):
    outcome = ReplayOutcome(tuple(map(str, labels)), (0,) * len(labels), 0)
    replays, chance = stabilizers.replays_to_confirm(outcome)
    assert stabilizers.MIN_REPLAYS <= replays <= stabilizers.MAX_REPLAYS
    assert chance < stabilizers.CHANCE or replays == stabilizers.MAX_REPLAYS


def test_rarer_variation_needs_more_replays():
    often, rarely = stabilizers.replays_to_confirm(plain(5)), stabilizers.replays_to_confirm(plain(2, 6))
    assert often[0] == 3 and rarely[0] > often[0]
