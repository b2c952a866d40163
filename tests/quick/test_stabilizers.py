"""Stabiliser search: group testing over the candidate table, against an oracle that knows
which sets of variables make a step stable."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.explain import budget as budget_module
from fuzzer.explain import stabilizers
from fuzzer.explain.budget import Budget
from fuzzer.execute.step_replay import ReplayOutcome, Variation, decided
from fuzzer.model import STABILIZERS

NAMES = [f"V{i}" for i in range(9)]


class OracleReplayer:
    """Stable iff the fixed variables include one of `works` (each a set fixed together)."""

    def __init__(self, works: list[set[str]], fails_with: set[str] = frozenset()):
        self.works, self.fails_with, self.tests = works, fails_with, 0
        self.counter = itertools.count()

    def replay(self, variation: Variation, times: int, seen: tuple[str, ...] | None = None) -> ReplayOutcome:
        """As StepReplayer's: a screen (`seen` given) stops once it is decided."""
        self.tests += 1
        fixed = set(variation.name.split(" + "))
        if fixed & self.fails_with:
            return ReplayOutcome(("x",), (1,), 0, "exited 1: HOME is not writable")
        stable = any(w <= fixed for w in self.works)
        digests: tuple[str, ...] = ()
        while len(digests) < times and not (seen is not None and decided((*seen, *digests))):
            digests += ("same",) if stable else (f"d{next(self.counter)}",)
        return ReplayOutcome(digests, (0,) * len(digests), 0)


@pytest.fixture(autouse=True)
def table(monkeypatch):
    monkeypatch.setattr(stabilizers, "candidates", lambda only=(): [Variation(n) for n in NAMES if not only or n in only])


def plain(distinct: int, n: int = 5) -> ReplayOutcome:
    return ReplayOutcome(tuple(f"d{i % distinct}" for i in range(n)), (0,) * n, 0)


@settings(max_examples=80, deadline=None)
@given(st.sets(st.sampled_from(NAMES), min_size=1, max_size=3))
def test_the_answer_is_a_minimal_stabilising_set(needed):
    replayer = OracleReplayer([needed])
    found = stabilizers.search(replayer)
    assert set(found.stabilizers) == needed and not found.alternatives
    # group testing: about k·log n tests, far below trying every pair (36) or triple (84),
    # plus the one that confirms the answer
    assert replayer.tests <= 3 + 2 * len(needed) * math.ceil(math.log2(len(NAMES)))
    assert found.confirmed == (stabilizers.MAX_CONFIRM_REPLAYS,)  # an unbounded budget affords the most


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(NAMES), min_size=2, max_size=3, unique=True))
def test_single_stabilisers_that_each_work_are_alternatives_never_a_union(singles):
    found = stabilizers.search(OracleReplayer([{n} for n in singles]))
    reported = [found.stabilizers, *found.alternatives]
    assert all(len(s) == 1 for s in reported)
    assert sorted(s[0] for s in reported) == sorted(singles)
    assert found.stabilizers == (min(singles, key=NAMES.index),)  # the table's order decides which comes first


def test_no_known_stabiliser_is_said_after_one_test():
    replayer = OracleReplayer([{"NOT-A-CANDIDATE"}])
    found = stabilizers.search(replayer)
    assert found.stabilizers == () and replayer.tests == 1
    assert "no known stabiliser" in found.describe()


def test_a_failing_replay_is_no_stability():
    found = stabilizers.search(OracleReplayer([{"V1"}], fails_with={"V7"}))
    assert found.stabilizers == () and "HOME is not writable" in found.describe()


class Clock:
    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


class TimedOracle(OracleReplayer):
    """Each replay takes `seconds` on a fake clock."""

    def __init__(self, works, clock: Clock, seconds: float):
        super().__init__(works)
        self.clock, self.seconds, self.replays = clock, seconds, 0

    def replay(self, variation, times, seen=None):
        outcome = super().replay(variation, times, seen)
        self.clock.now += len(outcome.digests) * self.seconds
        self.replays += len(outcome.digests)
        return outcome


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(stabilizers, "time", clock)
    monkeypatch.setattr(budget_module, "time", clock)
    return clock


def test_failing_tests_stop_at_two_different_outputs(clock):
    replayer = TimedOracle([{"V3", "V5"}], clock, seconds=5.0)
    found = stabilizers.search(replayer, per_replay_s=5.0)
    assert found.stabilizers == ("V3", "V5")
    *narrowing, (claimed, _, confirmed) = [t for t in found.tried if t[1] == 1]
    assert claimed == "V3 + V5" and confirmed == found.replays >= stabilizers.CONFIRM_REPLAYS
    assert all(replays == stabilizers.SCREEN_REPLAYS for _, _, replays in narrowing)  # screened only
    assert all(replays == 2 for _, distinct, replays in found.tried if distinct > 1)
    assert replayer.replays < len(found.tried) * stabilizers.CONFIRM_REPLAYS / 2


def test_no_test_starts_that_the_budget_cannot_finish_and_nothing_unconfirmed_is_claimed(clock):
    replayer = TimedOracle([{"V0", "V1"}], clock, seconds=1.0)
    budget = Budget(clock.now + 14.0, 14.0, "--localize-budget")
    found = stabilizers.search(replayer, budget=budget, per_replay_s=1.0)
    assert clock.now <= 14.0  # every test it started ended inside the budget
    assert found.stabilizers == () and found.tried  # screens passed, no set confirmed: no claim
    assert "not enough evidence for a stabiliser" in found.describe()
    assert "the localization budget ran out" in found.describe()
    nothing = stabilizers.search(TimedOracle([{"V0"}], clock, 1.0), budget=budget, per_replay_s=1.0)
    assert nothing.stabilizers == () and not nothing.tried and "budget ran out" in nothing.describe()


def test_a_confirmed_set_states_its_bound_and_the_search_wide_chance(clock):
    replayer = TimedOracle([{"V2"}], clock, seconds=1.0)
    budget = Budget(clock.now + 1000.0, 1000.0, "--localize-budget")
    found = stabilizers.search(replayer, budget=budget, per_replay_s=1.0)
    assert found.stabilizers == ("V2",) and found.replays == stabilizers.MAX_CONFIRM_REPLAYS
    text = found.describe()
    # 0 variations in 29 trials: Clopper-Pearson 95% upper bound 1 - 0.05^(1/29) = 9.8%
    assert "stable in 30 of 30 replays: residual variation below 10% a replay at 95%" in text
    assert "chance below 1% over the whole search" in text and "Bonferroni" in text


def test_the_user_chooses_the_candidates():
    replayer = OracleReplayer([{"V2"}, {"V6"}])
    found = stabilizers.search(replayer, only=("V4", "V2"))
    assert found.stabilizers == ("V2",) and not found.alternatives
    assert all(set(tested.split(" + ")) <= {"V2", "V4"} for tested, _, _ in found.tried)


def test_the_table_holds_perl_hash_order_and_home():
    table = {v.name: v for v, _ in stabilizers.TABLE}
    assert dict(table["PERL_HASH_SEED"].env) == {"PERL_HASH_SEED": "0", "PERL_PERTURB_KEYS": "0"}
    assert dict(table["HOME"].env) == {"HOME": stabilizers.FIXED_HOME}
    assert STABILIZERS.index("SOURCE_DATE_EPOCH") < STABILIZERS.index("clock")  # gcc's __DATE__


def test_the_table_holds_every_stabiliser_name_in_its_order():
    """--stabilizers is checked against model.STABILIZERS: the table must try each, in that order."""
    assert tuple(v.name for v, _ in stabilizers.TABLE) == STABILIZERS
