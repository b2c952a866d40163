"""The bisection itself, over plain data: commits oldest first and a judge that says, of
one commit, whether the finding shows there. Like `git bisect`, a commit that cannot be
judged (its reference build fails) is skipped and its neighbour nearest the middle is
tried instead; when only skipped commits are left, every one of them is named."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

BAD, GOOD, SKIP = "bad", "good", "skip"


@dataclass(frozen=True)
class Judged:
    rev: str
    verdict: str  # bad | good | skip
    tries: int  # perturbed builds made at this commit
    shown: int  # of them, those that showed the finding
    detail: str  # one line: why this verdict
    resumed: bool = False  # read back from the store, not built again


@dataclass(frozen=True)
class Bisection:
    first_bad: str | None  # None: the finding did not show at --bad, or skips left several
    suspects: list[str]  # with skips: the commits any of which may be the first bad one
    steps: list[Judged]


def bisect(revs: list[str], judge: Callable[[str], Judged]) -> Bisection:
    """`revs`: the commits after the good one, oldest first, the last being the bad one.
    The bad one is judged first: a reproducer that does not show there proves nothing."""
    steps = [judge(revs[-1])]
    if steps[0].verdict != BAD:
        return Bisection(None, [], steps)
    good, bad, skipped = -1, len(revs) - 1, set()
    while untested := [i for i in range(good + 1, bad) if i not in skipped]:
        middle = (good + bad) / 2
        index = min(untested, key=lambda i: (abs(i - middle), i))
        steps.append(judge(revs[index]))
        if steps[-1].verdict == SKIP:
            skipped.add(index)
        elif steps[-1].verdict == BAD:
            bad = index
        else:
            good = index
    suspects = [revs[i] for i in range(good + 1, bad + 1)]
    return Bisection(revs[bad] if len(suspects) == 1 else None, suspects, steps)


def steps_needed(commits: int) -> int:
    """Commits judged when none is skipped: the bad one, then ⌈log2 n⌉ halvings of the n - 1 others."""
    return 1 + (math.ceil(math.log2(commits)) if commits > 1 else 0)
