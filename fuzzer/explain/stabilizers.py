"""Stabilisers: variables that, once fixed, make an intrinsic step deterministic.

The candidates are one table, in order of preference (the report prints `name`). The
search is group testing: replay with every candidate fixed at once; if the step still
varies, no known variable explains it, said after those few replays. If it is stable,
delta debugging shrinks the set to a minimal one (joint sets of any size: the real
PeachPy needed ASLR off *and* a fixed hash seed), and the search repeats without it to
find alternatives (a `__DATE__` is fixed by SOURCE_DATE_EPOCH or by a frozen clock).

"Stable" is a statistical claim. Every test replays the step often enough that, at the
variation rate measured on the plain replays, a chance match stays below 1%.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from fuzzer.execute.step_replay import ReplayOutcome, StepReplayer, Variation, umask_wrapper
from fuzzer.tools import faketime, setarch

FIXED_EPOCH = "946684800"  # 2000-01-01, any constant will do
FIXED_HOME = "/nonexistent"  # what Debian's builders use: a HOME nothing can depend on
CHANCE = 0.01  # a variation that does not stabilise may look stable this often, at most
MIN_REPLAYS, MAX_REPLAYS = 3, 15
MAX_ALTERNATIVES = 3


def candidates() -> list[Variation]:
    """The candidate table, most common causes first (ties in minimal sets go to them)."""
    table = [
        Variation("PYTHONHASHSEED", env=(("PYTHONHASHSEED", "0"),)),
        Variation("ASLR", wrappers=(setarch.wrap,)) if setarch.available() else None,
        Variation("SOURCE_DATE_EPOCH", env=(("SOURCE_DATE_EPOCH", FIXED_EPOCH),)),
        Variation("PERL_HASH_SEED", env=(("PERL_HASH_SEED", "0"), ("PERL_PERTURB_KEYS", "0"))),
        Variation("clock", wrappers=(faketime.wrap,)) if faketime.available() else None,
        Variation("TZ", env=(("TZ", "UTC"),)),
        Variation("LC_ALL", env=(("LC_ALL", "C"),)),
        Variation("HOME", env=(("HOME", FIXED_HOME),)),
        Variation("umask", wrappers=(umask_wrapper(0o022),)),
    ]
    return [v for v in table if v is not None]


def names() -> list[str]:
    return [v.name for v in candidates()]


@dataclass(frozen=True)
class StabilizerSearch:
    stabilizers: tuple[str, ...]  # a minimal set that makes the step stable (empty: none found)
    alternatives: tuple[tuple[str, ...], ...]  # other minimal sets that work as well
    replays: int  # replays per test
    chance: float  # chance that a non-stabilising set passed a test, at the measured rate
    tried: tuple[tuple[str, int, int], ...]  # (set, distinct digests, replays) per test
    failure: str = ""  # a test whose replays exited differently: no conclusion drawn

    def describe(self) -> str:
        tests = f"{len(self.tried)} tests of {self.replays} replays each"
        confidence = f"a chance match at the measured variation rate is {_percent(self.chance)}"
        if self.failure:
            return f"the stabiliser search stopped: a replay {self.failure}"
        if not self.stabilizers:
            everything = self.tried[0][0] if self.tried else "every candidate"
            return (f"with every candidate fixed at once ({everything}) it still varied "
                    f"({self.tried[0][1] if self.tried else '?'} distinct in {self.replays}): no known stabiliser")
        found = " + ".join(self.stabilizers) + (" together" if len(self.stabilizers) > 1 else "")
        text = f"it becomes stable with {found} ({tests}; {confidence})"
        if self.alternatives:
            text += "; it is equally stable with " + " or ".join(" + ".join(a) for a in self.alternatives)
        return text


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


def search(replayer: StepReplayer, plain: ReplayOutcome) -> StabilizerSearch:
    replays, chance = replays_to_confirm(plain)
    tester = _Tester(replayer, replays)
    pool = candidates()
    if not tester.stable(pool):
        return tester.result((), (), chance)
    found: list[tuple[Variation, ...]] = []
    while len(found) <= MAX_ALTERNATIVES and pool and not tester.failure:
        minimal = tuple(_ddmin(pool, tester.stable))
        found.append(minimal)
        pool = [v for v in pool if v not in minimal]
        if not pool or not tester.stable(pool):
            break
    sets = [tuple(v.name for v in s) for s in found]
    return tester.result(sets[0], tuple(sets[1:]), chance)


class _Tester:
    """Replays a set of candidates fixed together; remembers every test."""

    def __init__(self, replayer: StepReplayer, replays: int):
        self.replayer, self.replays = replayer, replays
        self.tried: list[tuple[str, int, int]] = []
        self.known: dict[tuple[str, ...], bool] = {}
        self.failure = ""

    def stable(self, variations: list[Variation]) -> bool:
        key = tuple(v.name for v in variations)
        if key not in self.known:
            outcome = self.replayer.replay(combine(variations), self.replays)
            self.tried.append((" + ".join(key), outcome.distinct, self.replays))
            if outcome.failed and not self.failure:
                self.failure = f"with {' + '.join(key)} fixed {outcome.failure}"
            self.known[key] = outcome.stable
        return self.known[key]

    def result(self, found: tuple[str, ...], alternatives: tuple[tuple[str, ...], ...], chance: float):
        failure = self.failure if not found else ""
        return StabilizerSearch(found, alternatives, self.replays, chance, tuple(self.tried), failure)


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
