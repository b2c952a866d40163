"""Which root divergent steps are explained first, and the order the report lists them in.

A root is judged by what its differing outputs are and where the differing files it
explains lead (its output, and everything downstream that differs because of it):

1. NAMED: it explains a file the user named with `--artifact`;
2. DELIVERABLE: it explains a file that is not a log or a cache: a library, an executable,
   a package, an object, a generated source (`config.h` counts: it leads into the build);
3. BOOKKEEPING: everything it explains is a log, a cache or a tool's database
   (LOGS_AND_CACHES: the build systems' bookkeeping of `fuzzer.compare.bookkeeping`, which
   reaches localization only with --count-bookkeeping, and other logs and caches: `*.log`,
   `config.cache`, `__pycache__/`, ...);
4. NOISE: bookkeeping whose variants differ only in temporary file names, process ids or
   dates (`fuzzer.explain.noise`): reported in one line, last.

Roots are explained tier by tier, and within a tier the cheapest first (the traced run time
of the step, which is what one replay costs), so a slow configure script cannot use up the
budget before a quick compile is explained. The report lists them tier by tier, and within
a tier in the trace's order: most differing files explained, race evidence, failure, start.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from fuzzer.compare import bookkeeping
from fuzzer.observe import matches_any
from fuzzer.trace.graph import RootCandidate

# .gitignore-style globs (as --artifact/--ignore): files a build keeps for itself or for
# the person debugging it, never what it delivers: the build systems' bookkeeping, and
# other logs and caches that a build may differ in for reasons of its own
LOGS_AND_CACHES = bookkeeping.GLOBS + (
    "*.log", "config.cache", "stamp-h*", ".deps/", "*.Po", "*.Plo", "CMakeCache.txt", "**/CMakeFiles/*.yaml",
    "meson-private/", "__pycache__/", "*.pyc", ".sconsign*", "*.tmp",
)


class Tier(IntEnum):
    NAMED = 0
    DELIVERABLE = 1
    BOOKKEEPING = 2
    NOISE = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Ranked:
    root: RootCandidate
    tier: Tier
    position: int  # in the trace's order (find_roots): the order within a tier in the report


def is_log_or_cache(path: str) -> bool:
    return matches_any(path, LOGS_AND_CACHES)


def tier_of(root: RootCandidate, named: tuple[str, ...], noise: bool) -> Tier:
    """`named`: the user's --artifact globs; `noise`: every differing output of the root is
    known noise. A root that explains nothing (a failed step) is a deliverable's: the
    build itself broke."""
    explained = root.explains or root.outputs
    if named and any(matches_any(p, named) for p in explained):
        return Tier.NAMED
    if not explained or any(not is_log_or_cache(p) for p in explained):
        return Tier.DELIVERABLE
    return Tier.NOISE if noise else Tier.BOOKKEEPING


def rank(roots: list[RootCandidate], named: tuple[str, ...], noisy: set[int]) -> list[Ranked]:
    """`noisy`: indexes (in `roots`) of the roots whose outputs are known noise. Returned in
    the order to explain them: by tier, then the cheapest first."""
    ranked = [Ranked(root, tier_of(root, named, i in noisy), i) for i, root in enumerate(roots)]
    return sorted(ranked, key=lambda r: (r.tier, r.root.duration, r.position))


def report_key(ranked: Ranked) -> tuple[int, int]:
    return ranked.tier, ranked.position
