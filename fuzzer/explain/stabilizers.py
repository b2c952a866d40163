"""Candidate stabilisers: variables that, once fixed, may make an intrinsic step
deterministic. Each is a `Variation` of how the step is replayed.

Order matters only for the report: cheaper, more common causes first. Combinations are
tried when no single stabiliser works (the real PeachPy needed ASLR off *and* a fixed
hash seed, see design.md).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from fuzzer.explain.step_replay import ReplayOutcome, StepReplayer, Variation, umask_wrapper
from fuzzer.tools import faketime, setarch

STABLE_REPLAYS = 4
FIXED_EPOCH = "946684800"  # 2000-01-01, any constant will do
MAX_COMBINATION = 2


def candidates() -> list[Variation]:
    found = [
        Variation("PYTHONHASHSEED", env=(("PYTHONHASHSEED", "0"),)),
        Variation("SOURCE_DATE_EPOCH", env=(("SOURCE_DATE_EPOCH", FIXED_EPOCH),)),
        Variation("TZ", env=(("TZ", "UTC"),)),
        Variation("LC_ALL", env=(("LC_ALL", "C"),)),
        Variation("umask", wrappers=(umask_wrapper(0o022),)),
    ]
    if setarch.available():
        found.insert(1, Variation("ASLR", wrappers=(setarch.wrap,)))
    if faketime.available():
        found.append(Variation("clock", wrappers=(faketime.wrap,)))
    return found


@dataclass(frozen=True)
class StabilizerSearch:
    stabilizers: tuple[str, ...]  # names that alone make the step stable, or one combination
    tried: tuple[tuple[str, int], ...]  # (variation name, distinct digests over the replays)
    joint: bool  # the answer is a combination: no single variable sufficed


def search(replayer: StepReplayer) -> StabilizerSearch:
    """Single stabilisers first; pairs only when no single one makes the step stable."""
    singles = candidates()
    tried: list[tuple[str, int]] = []
    for size in range(1, MAX_COMBINATION + 1):
        variations = [combine(c) for c in itertools.combinations(singles, size)]
        outcomes = replayer.replay_each(variations, STABLE_REPLAYS)
        tried += [(name, outcome.distinct) for name, outcome in outcomes.items()]
        stable = [v for v in variations if _stable(outcomes[v.name])]
        if stable:
            names = tuple(v.name for v in stable) if size == 1 else tuple(stable[0].name.split(" + "))
            return StabilizerSearch(names, tuple(tried), joint=size > 1)
    return StabilizerSearch((), tuple(tried), joint=False)


def combine(variations: tuple[Variation, ...]) -> Variation:
    return Variation(
        " + ".join(v.name for v in variations),
        env=tuple(kv for v in variations for kv in v.env),
        wrappers=tuple(w for v in variations for w in v.wrappers),
    )


def _stable(outcome: ReplayOutcome) -> bool:
    return not outcome.varies and all(code == 0 for code in outcome.exit_codes)
