"""Stabilisers: variables that, once fixed, make an intrinsic step deterministic.

The candidates are one table, in order of preference (the report prints `name`). The
search is group testing: replay with every candidate fixed at once; if the step still
varies, no known variable explains it, said after those few replays. If it is stable,
delta debugging shrinks the set to a minimal one (joint sets of any size: the real
PeachPy needed ASLR off *and* a fixed hash seed), and the search repeats without it to
find alternatives (a `__DATE__` is fixed by SOURCE_DATE_EPOCH or by a frozen clock).

"Stable" is a statistical claim. Every test replays the step often enough that, at the
variation rate measured on the plain replays, a chance match stays below 1%; "unstable"
is not: two different outputs prove it, so a slow step's test stops there. No test
starts that the localization budget cannot finish; a search cut short says what it knew.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from fuzzer.execute.step_replay import SPREAD_S, ReplayOutcome, StepReplayer, Variation, umask_wrapper
from fuzzer.explain.budget import UNLIMITED, Budget
from fuzzer.tools import faketime, setarch

FIXED_EPOCH = "946684800"  # 2000-01-01, any constant will do
FIXED_HOME = "/nonexistent"  # what Debian's builders use: a HOME nothing can depend on
CHANCE = 0.01  # a variation that does not stabilise may look stable this often, at most
MIN_REPLAYS, MAX_REPLAYS = 3, 15
MAX_ALTERNATIVES = 3
FIRST_LOOK = 2  # replays of a slow step before the rest: two different outputs already say "unstable"

# The candidate table, most common causes first (ties in minimal sets go to them); the
# report prints each name, and `--stabilizers` picks among them. A candidate whose tool is
# missing or unusable here is left out.
TABLE: tuple[tuple[Variation, Callable[[], bool] | None], ...] = (
    (Variation("PYTHONHASHSEED", env=(("PYTHONHASHSEED", "0"),)), None),
    (Variation("ASLR", wrappers=(setarch.wrap,)), setarch.available),
    # gcc takes __DATE__ and __TIME__ from it (scenarios/timestamp)
    (Variation("SOURCE_DATE_EPOCH", env=(("SOURCE_DATE_EPOCH", FIXED_EPOCH),)), None),
    # perl's hash order (autom4te's caches): the seed alone still perturbs key order per hash
    (Variation("PERL_HASH_SEED", env=(("PERL_HASH_SEED", "0"), ("PERL_PERTURB_KEYS", "0"))), None),
    (Variation("clock", wrappers=(faketime.wrap,)), faketime.available),
    (Variation("TZ", env=(("TZ", "UTC"),)), None),
    (Variation("LC_ALL", env=(("LC_ALL", "C"),)), None),
    (Variation("HOME", env=(("HOME", FIXED_HOME),)), None),
    (Variation("umask", wrappers=(umask_wrapper(0o022),)), None),
)
NAMES = tuple(v.name for v, _ in TABLE)


def candidates(only: tuple[str, ...] = ()) -> list[Variation]:
    """The usable candidates, in table order; `only`: the user's choice among NAMES."""
    return [v for v, usable in TABLE if (not only or v.name in only) and (usable is None or usable())]


def unusable(only: tuple[str, ...] = ()) -> list[str]:
    """Candidates (of the user's choice) left out because their tool is missing here."""
    usable = {v.name for v in candidates(only)}
    return [name for name in (only or NAMES) if name not in usable]


class OutOfBudget(Exception):
    """The next test would not end inside the localization budget."""


@dataclass(frozen=True)
class StabilizerSearch:
    stabilizers: tuple[str, ...]  # a minimal set that makes the step stable (empty: none found)
    alternatives: tuple[tuple[str, ...], ...]  # other minimal sets that work as well
    replays: int  # replays per test that found a set stable
    chance: float  # chance that a non-stabilising set passed a test, at the measured rate
    tried: tuple[tuple[str, int, int], ...]  # (set, distinct digests, replays) per test
    failure: str = ""  # a test whose replays exited differently: no conclusion drawn
    stopped: str = ""  # why the search ended early (the budget), "" when it ran to its end
    minimal: bool = True  # False: the budget ran out while `stabilizers` was being narrowed

    def describe(self) -> str:
        tests = f"{len(self.tried)} tests of up to {self.replays} replays"
        confidence = f"a chance match at the measured variation rate is {_percent(self.chance)}"
        if self.failure:
            return f"the stabiliser search stopped: a replay {self.failure}"
        if not self.tried:
            return f"no stabiliser was tried: {self.stopped or 'no candidate is usable here'}"
        if not self.stabilizers:
            if self.stopped:
                return f"no stabiliser found in {tests}: {self.stopped}"
            everything, distinct, replays = self.tried[0]
            return (f"with every candidate fixed at once ({everything or 'none usable'}) it still varied "
                    f"({distinct} distinct in {replays}): no known stabiliser")
        found = " + ".join(self.stabilizers) + (" together" if len(self.stabilizers) > 1 else "")
        text = f"it becomes stable with {found} ({tests}; {confidence})"
        if not self.minimal:
            return text + f"; {self.stopped} before this set was narrowed to a minimal one"
        if self.alternatives:
            text += "; it is equally stable with " + " or ".join(" + ".join(a) for a in self.alternatives)
        return text + (f"; {self.stopped} before other sets were searched" if self.stopped else "")


def replays_to_confirm(plain: ReplayOutcome) -> tuple[int, float]:
    """How many identical replays make a chance match unlikely (< CHANCE), from the plain
    replays: the chance that two replays agree, estimated with one pseudo-count each way."""
    n = len(plain.digests)
    pairs = n * (n - 1) / 2
    agreeing = sum(c * (c - 1) / 2 for c in Counter(plain.digests).values())
    p_same = (agreeing + 1) / (pairs + 2)
    needed = 1 + math.ceil(math.log(CHANCE) / math.log(p_same))
    replays = max(MIN_REPLAYS, min(MAX_REPLAYS, needed))
    return replays, p_same ** (replays - 1)


def search(replayer: StepReplayer, plain: ReplayOutcome, only: tuple[str, ...] = (), budget: Budget = UNLIMITED,
           per_replay_s: float = 0.0) -> StabilizerSearch:
    """`per_replay_s`: what one replay was seen to cost, so no test starts that the budget
    cannot finish."""
    replays, chance = replays_to_confirm(plain)
    tester = _Tester(replayer, replays, budget, per_replay_s)
    pool = candidates(only)
    found: list[tuple[Variation, ...]] = []
    try:
        if not pool or not tester.stable(pool):
            return tester.result((), (), chance)
        while len(found) <= MAX_ALTERNATIVES and pool and not tester.failure:
            found.append(tuple(_ddmin(pool, tester.stable)))
            pool = [v for v in pool if v not in found[-1]]
            if not pool or not tester.stable(pool):
                break
    except OutOfBudget:
        return tester.unfinished(found, chance)
    sets = [tuple(v.name for v in s) for s in found]
    return tester.result(sets[0], tuple(sets[1:]), chance)


class _Tester:
    """Replays a set of candidates fixed together; remembers every test."""

    def __init__(self, replayer: StepReplayer, replays: int, budget: Budget, per_replay_s: float):
        self.replayer, self.replays, self.budget, self.per_replay_s = replayer, replays, budget, per_replay_s
        self.tried: list[tuple[str, int, int]] = []
        self.known: dict[tuple[str, ...], bool] = {}
        self.failure = ""

    def stable(self, variations: list[Variation]) -> bool:
        key = tuple(v.name for v in variations)
        if key not in self.known:
            outcome = self._replay(combine(variations))
            self.tried.append((" + ".join(key), outcome.distinct, len(outcome.digests)))
            if outcome.failed and not self.failure:
                self.failure = f"with {' + '.join(key)} fixed {outcome.failure}"
            self.known[key] = outcome.stable
        return self.known[key]

    def _replay(self, variation: Variation) -> ReplayOutcome:
        """A slow step first gets FIRST_LOOK replays, the rest only if those agreed (its own run
        time already spreads them over the clock); a fast one gets them all in one paced pass."""
        if not self.budget.affords(self.replays * self.per_replay_s):
            raise OutOfBudget
        first = FIRST_LOOK if self.per_replay_s >= SPREAD_S else self.replays
        outcome = self._timed(variation, min(first, self.replays))
        if len(outcome.digests) < self.replays and outcome.stable:
            outcome = _joined(outcome, self._timed(variation, self.replays - len(outcome.digests)))
        return outcome

    def _timed(self, variation: Variation, times: int) -> ReplayOutcome:
        started = time.monotonic()
        outcome = self.replayer.replay(variation, times)
        self.per_replay_s = max(self.per_replay_s, (time.monotonic() - started) / times)
        return outcome

    def result(self, found: tuple[str, ...], alternatives: tuple[tuple[str, ...], ...], chance: float):
        failure = self.failure if not found else ""
        return StabilizerSearch(found, alternatives, self.replays, chance, tuple(self.tried), failure)

    def unfinished(self, found: list[tuple[Variation, ...]], chance: float) -> StabilizerSearch:
        """What the search knew when the budget ran out: the minimal sets found so far, else
        the smallest set seen to make the step stable (not proven minimal)."""
        stopped = "the localization budget ran out"
        if found:
            sets = [tuple(v.name for v in s) for s in found]
            return StabilizerSearch(sets[0], tuple(sets[1:]), self.replays, chance, tuple(self.tried), stopped=stopped)
        stable = sorted((k for k, ok in self.known.items() if ok), key=len)
        smallest = stable[0] if stable else ()
        return StabilizerSearch(smallest, (), self.replays, chance, tuple(self.tried), self.failure, stopped,
                                minimal=not smallest)


def _joined(a: ReplayOutcome, b: ReplayOutcome) -> ReplayOutcome:
    return ReplayOutcome(a.digests + b.digests, a.exit_codes + b.exit_codes, a.expected_exit, a.failure or b.failure)


def _ddmin(pool: list[Variation], stable) -> list[Variation]:
    """Delta debugging (complements only): a 1-minimal subset of a stable `pool` that is
    still stable, about k·log n tests for a set of k. Later chunks go first, so earlier
    (preferred) candidates are kept when either would do."""
    current, chunks = list(pool), 2
    while len(current) > 1:
        parts = _split(current, chunks)
        for part in reversed(parts):
            rest = [v for v in current if v not in part]
            if rest and stable(rest):
                current, chunks = rest, max(chunks - 1, 2)
                break
        else:
            if chunks >= len(current):
                break
            chunks = min(2 * chunks, len(current))
    return current


def _split(items: list, n: int) -> list[list]:
    size, extra = divmod(len(items), n)
    parts, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        parts.append(items[start:end])
        start = end
    return [p for p in parts if p]


def combine(variations) -> Variation:
    return Variation(
        " + ".join(v.name for v in variations),
        env=tuple(kv for v in variations for kv in v.env),
        wrappers=tuple(w for v in variations for w in v.wrappers),
    )


def _percent(p: float) -> str:
    return "below 1%" if p < CHANCE else f"about {p:.0%}"
