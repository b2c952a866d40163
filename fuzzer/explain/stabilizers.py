"""Stabilisers: variables that, once fixed, make an intrinsic step deterministic.

The candidates are one table, in order of preference (the report prints `name`). The
search is group testing: replay with every candidate fixed at once; if the step still
varies, no known variable explains it. If it is stable, delta debugging shrinks the set
to a minimal one (joint sets of any size: the real PeachPy needed ASLR off *and* a fixed
hash seed), and the search repeats without it to find alternatives (a `__DATE__` is
fixed by SOURCE_DATE_EPOCH or by a frozen clock).

"Stable" is a statistical claim, and a partial stabiliser is what makes it hard: it
leaves a lower variation rate than the plain replays show, so a few identical replays
under it happen by chance. Narrowing is steered by short screens (SCREEN_REPLAYS); a
set is *called* stable only after CONFIRM_REPLAYS identical replays or more under that
very set, which bound the variation it leaves (reported with the set). The chance that
the search calls any set stable that leaves much variation stays below CHANCE over the
whole search: CHANCE is split evenly over at most MAX_TESTS tests (Bonferroni), screens
included, because any test of a set can be the one that is later confirmed. "Unstable"
needs no statistics: two different outputs prove it, so a test stops at the first replay
that differs (`step_replay.decided`), in whichever slot it ran. No test
starts that the localization budget cannot finish; a search cut short claims nothing it
has not confirmed ("not enough evidence").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Sequence, TypeVar

from fuzzer import stats
from fuzzer.execute.replay_spread import Replayer
from fuzzer.execute.step_replay import REPLAYS, ReplayOutcome, Variation, umask_wrapper
from fuzzer.explain.budget import UNLIMITED, Budget
from fuzzer.model import STABILIZERS
from fuzzer.model import Stabilizer as S
from fuzzer.tools import faketime, setarch

FIXED_EPOCH = "946684800"  # 2000-01-01, any constant will do
FIXED_HOME = "/nonexistent"  # what Debian's builders use: a HOME nothing can depend on
CHANCE = 0.01  # over the whole search: the chance of calling a set stable that is not
MAX_TESTS = 40  # the search makes at most this many tests; each gets CHANCE / MAX_TESTS
SCREEN_REPLAYS = 3  # identical replays that make a set a candidate while narrowing (no claim)
CONFIRM_REPLAYS, MAX_CONFIRM_REPLAYS = 10, 30  # identical replays a claimed set needs, more when affordable
CONFIRM_SHARE = 0.25  # going above CONFIRM_REPLAYS may spend this share of the budget left
MAX_ALTERNATIVES = 3
T = TypeVar("T")  # what _split cuts into chunks

# The candidate table, most common causes first (ties in minimal sets go to them); the
# report prints each name, and `--stabilizers` picks among them (in model.Stabilizer's order). A candidate whose tool is
# missing or unusable here is left out.
TABLE: tuple[tuple[Variation, Callable[[], str | None] | None], ...] = (
    (Variation(S.PYTHONHASHSEED.value, env=(("PYTHONHASHSEED", "0"),)), None),
    (Variation(S.ASLR.value, wrappers=(setarch.wrap,)), setarch.SETARCH.problem),
    # gcc takes __DATE__ and __TIME__ from it (scenarios/timestamp)
    (Variation(S.SOURCE_DATE_EPOCH.value, env=(("SOURCE_DATE_EPOCH", FIXED_EPOCH),)), None),
    # perl's hash order (autom4te's caches): the seed alone still perturbs key order per hash
    (Variation(S.PERL_HASH_SEED.value, env=(("PERL_HASH_SEED", "0"), ("PERL_PERTURB_KEYS", "0"))), None),
    (Variation(S.CLOCK.value, wrappers=(faketime.wrap,)), faketime.FAKETIME.problem),
    (Variation(S.TZ.value, env=(("TZ", "UTC"),)), None),
    (Variation(S.LC_ALL.value, env=(("LC_ALL", "C"),)), None),
    (Variation(S.HOME.value, env=(("HOME", FIXED_HOME),)), None),
    (Variation(S.UMASK.value, wrappers=(umask_wrapper(0o022),)), None),
)


def candidates(only: tuple[str, ...] = ()) -> list[Variation]:
    """The usable candidates, in table order; `only`: the user's choice among model.STABILIZERS."""
    return [v for v, problem in TABLE if (not only or v.name in only) and (problem is None or problem() is None)]


def unusable(only: tuple[str, ...] = ()) -> list[str]:
    """Candidates (of the user's choice) left out because their tool is missing here."""
    usable = {v.name for v in candidates(only)}
    return [name for name in (only or STABILIZERS) if name not in usable]


class OutOfBudget(Exception):
    """The next test would not end inside the localization budget."""


class OutOfTests(Exception):
    """The search made MAX_TESTS tests: its share of CHANCE covers no more."""


@dataclass(frozen=True)
class StabilizerSearch:
    stabilizers: tuple[str, ...]  # a minimal set confirmed stable (empty: none confirmed)
    alternatives: tuple[tuple[str, ...], ...]  # other minimal sets, confirmed as well
    replays: int  # identical replays under the least confirmed of the reported sets
    chance: float  # bound on the chance of a false set over the whole search
    tried: tuple[tuple[str, int, int], ...]  # (set, distinct digests, replays so far) per test
    failure: str = ""  # a test whose replays exited differently: no conclusion drawn
    stopped: str = ""  # why the search ended early (budget, tests), "" when it ran to its end
    confirmed: tuple[int, ...] = ()  # identical replays under each reported set, stabilizers first
    unconfirmed: str = ""  # a set identical in its screen that could not be confirmed: no claim
    left_replays: int = 0  # the budget stopped it before any set was confirmed: about the replays still needed

    def describe(self) -> str:
        if self.failure:
            return f"the stabiliser search stopped: a replay {self.failure}"
        if not self.tried:
            return f"no stabiliser was tried: {self.stopped or 'no candidate is usable here'}"
        if not self.stabilizers:
            return self._nothing_confirmed()
        sets = [self.stabilizers, *self.alternatives]
        claims = [f"{_named(s)} ({_bound(n)})" for s, n in zip(sets, self.confirmed)]
        text = f"it becomes stable with {claims[0]}"
        if claims[1:]:
            text += "; it is equally stable with " + " or ".join(claims[1:])
        text += "; " + _guarantee(len(self.tried), self.replays)
        return text + (f"; {self.stopped} before other sets were searched" if self.stopped else "")

    def _nothing_confirmed(self) -> str:
        if self.stopped:
            short = (f"; with {self.unconfirmed} fixed it was identical in its first replays, short of the "
                     f"{CONFIRM_REPLAYS} a claim needs" if self.unconfirmed else "")
            return f"not enough evidence for a stabiliser in {len(self.tried)} tests: {self.stopped}{short}"
        everything = self.tried[0][0]
        _, distinct, replays = [t for t in self.tried if t[0] == everything][-1]
        return (f"with every candidate fixed at once ({everything}) it still varied "
                f"({distinct} distinct in {replays}): no known stabiliser")


def search(replayer: Replayer, only: tuple[str, ...] = (), budget: Budget = UNLIMITED,
           per_replay_s: float = 0.0) -> StabilizerSearch:
    """`per_replay_s`: what one replay was seen to cost, so no test starts that the budget
    cannot finish. The plain replays size nothing: a partial stabiliser leaves a lower
    variation rate than they show."""
    tester = _Tester(replayer, budget, per_replay_s)
    pool = candidates(only)
    found: list[tuple[Variation, ...]] = []
    try:
        while pool and len(found) <= MAX_ALTERNATIVES and not tester.failure:
            minimal = _narrowed(pool, tester)
            if minimal is None:
                break
            found.append(minimal)
            pool = [v for v in pool if v not in minimal]
    except OutOfBudget as stop:
        return replace(tester.result(found, str(stop)), left_replays=0 if found else _left(tester, only))
    except OutOfTests as stop:
        return tester.result(found, str(stop))
    return tester.result(found)


def full_search_replays(candidates_n: int) -> int:
    """About what a search that confirms one set takes: a screen of every candidate at once
    and about one per candidate while narrowing, then its confirmation."""
    return SCREEN_REPLAYS * (candidates_n + 1) + CONFIRM_REPLAYS


def explaining_s(duration_s: float, only: tuple[str, ...]) -> float:
    """About what explaining a root left unexplained takes: its plain replays and, as a root two
    builds found differing mostly varies alone, a stabiliser search. Its plain replays alone
    said 10 minutes would complete a NNPACK run that 45 did not (each PeachPy kernel's search
    is about 40 of its replays)."""
    return (REPLAYS + full_search_replays(len(candidates(only)))) * duration_s


def _left(tester: "_Tester", only: tuple[str, ...]) -> int:
    done = sum(replays for _, _, replays in tester.tried)
    return max(full_search_replays(len(candidates(only))) - done, CONFIRM_REPLAYS)


def _narrowed(pool: list[Variation], tester: "_Tester") -> tuple[Variation, ...] | None:
    """A minimal subset of `pool` confirmed stable; None when `pool` is not stable. A set
    that fails its confirmation is proven unstable (two outputs differ), so delta debugging
    runs again and goes around it."""
    while tester.stable(pool):
        minimal = _ddmin(pool, tester.stable)
        if tester.confirm(minimal):
            return tuple(minimal)
    return None


class _Tester:
    """Replays sets of candidates fixed together; remembers every test and every digest."""

    def __init__(self, replayer: Replayer, budget: Budget, per_replay_s: float):
        self.replayer, self.budget, self.per_replay_s = replayer, budget, per_replay_s
        self.tried: list[tuple[str, int, int]] = []
        self.digests: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.known: dict[tuple[str, ...], bool] = {}
        self.confirmations: dict[tuple[str, ...], int] = {}
        self.unconfirmed = ""
        self.failure = ""

    def stable(self, variations: list[Variation]) -> bool:
        """A screen: SCREEN_REPLAYS identical replays make the set a candidate, no more."""
        key = _key(variations)
        if key not in self.known:
            self._test(variations, SCREEN_REPLAYS)
        return self.known[key]

    def confirm(self, variations: list[Variation]) -> bool:
        """A claim: the set's replays, its screen's included, extended to the confirmation
        count; all must be identical."""
        key = _key(variations)
        if self.known.get(key) and key not in self.confirmations:
            self.unconfirmed = " + ".join(key)
            self._test(variations, self._confirmation_replays())
            if self.known[key]:
                self.confirmations[key], self.unconfirmed = len(self.digests[key]), ""
        return key in self.confirmations

    def _confirmation_replays(self) -> int:
        """CONFIRM_REPLAYS at least; up to MAX_CONFIRM_REPLAYS when a share of the budget
        left affords them."""
        share = CONFIRM_SHARE * self.budget.left()
        affordable = share / self.per_replay_s if self.per_replay_s > 0 else float("inf")
        return int(max(CONFIRM_REPLAYS, min(MAX_CONFIRM_REPLAYS, affordable)))

    def _test(self, variations: list[Variation], total: int) -> None:
        """Replays until the set has `total` in all, or until two of them differ."""
        if len(self.tried) >= MAX_TESTS:
            raise OutOfTests(f"the search made the {MAX_TESTS} tests its {CHANCE:.0%} chance of a false set covers")
        key = _key(variations)
        digests = self.digests.get(key, ())
        if not self.budget.affords((total - len(digests)) * self.per_replay_s):
            raise OutOfBudget("the localization budget ran out")
        failure = ""
        if len(set(digests)) <= 1:  # a screen: it stops at the first replay that differs from the rest
            outcome = self._timed(combine(variations), total - len(digests), digests)
            digests, failure = digests + outcome.digests, outcome.failure or ("failed" if outcome.failed else "")
        self.digests[key] = digests
        self.tried.append((" + ".join(key), len(set(digests)), len(digests)))
        if failure and not self.failure:
            self.failure = f"with {' + '.join(key)} fixed {failure}"
        self.known[key] = not failure and len(set(digests)) == 1

    def _timed(self, variation: Variation, times: int, seen: tuple[str, ...]) -> ReplayOutcome:
        started = time.monotonic()
        outcome = self.replayer.replay(variation, times, seen)
        if outcome.digests:
            self.per_replay_s = max(self.per_replay_s, (time.monotonic() - started) / len(outcome.digests))
        return outcome

    def result(self, found: list[tuple[Variation, ...]], stopped: str = "") -> StabilizerSearch:
        sets = [_key(s) for s in found]
        counts = tuple(self.confirmations[s] for s in sets)
        failure = self.failure if not sets else ""
        return StabilizerSearch(sets[0] if sets else (), tuple(sets[1:]), min(counts, default=0),
                                CHANCE if sets else 0.0, tuple(self.tried), failure, stopped, counts,
                                self.unconfirmed)


def _key(variations: Sequence[Variation]) -> tuple[str, ...]:
    return tuple(v.name for v in variations)


def _named(names: tuple[str, ...]) -> str:
    return " + ".join(names) + (" together" if len(names) > 1 else "")


def _bound(identical: int) -> str:
    """The first replay sets the output; each further identical one is a trial in which the
    step could have varied."""
    residual = stats.percent_above(stats.upper_bound_zero(identical - 1))
    return f"stable in {identical} of {identical} replays: residual variation below {residual} a replay at 95%"


def _guarantee(tests: int, identical: int) -> str:
    covered = stats.percent_above(stats.rate_excluded(identical - 1, CHANCE / MAX_TESTS))
    return (f"{tests} tests in all: a set that leaves {covered} or more of its replays varying is called stable "
            f"with a chance below {CHANCE:.0%} over the whole search ({CHANCE:.0%} split evenly over at most "
            f"{MAX_TESTS} tests, Bonferroni)")


def _ddmin(pool: list[Variation], stable: Callable[[list[Variation]], bool]) -> list[Variation]:
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


def _split(items: list[T], n: int) -> list[list[T]]:
    size, extra = divmod(len(items), n)
    parts, start = [], 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        parts.append(items[start:end])
        start = end
    return [p for p in parts if p]


def combine(variations: Sequence[Variation]) -> Variation:
    return Variation(
        " + ".join(v.name for v in variations),
        env=tuple(kv for v in variations for kv in v.env),
        wrappers=tuple(w for v in variations for w in v.wrappers),
    )
