"""`buildfuzz bisect`: the commit that introduced a finding.

Each commit between --good and --bad is built in its own worktree and judged by the
finding's reproducer (`reproducer.py`, `check.py`), over a bisection that skips what does
not build (`search.py`). A flaky finding gets enough tries per commit that a commit that
has it is judged clean with a small chance at its measured rate: a try shows it with
chance p, so n tries all miss it with (1 - p)^n. That chance is 1% split over the steps
the bisection takes, so each step is wrong below 1% and the named commit too (a wrong
step is the only way to name a wrong one). A bad commit stops at its first showing try. Every judged commit is stored as it is judged, so an interrupted bisection,
run again, resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fuzzer import structs
from fuzzer.bisect import check
from fuzzer.bisect.reproducer import Reproducer
from fuzzer.bisect.search import Bisection, Judged, bisect, steps_needed
from fuzzer.errors import UsageError
from fuzzer.escaping import one_line
from fuzzer.stats import tries_to_tell
from fuzzer.store import Store
from fuzzer.tools import git

WRONG = 0.01  # the chance of a wrong answer the tries are sized for, split over the steps
UNMEASURED_TRIES = 5  # a finding with no measured rate (a hazard): enough for one that shows most of the time


@dataclass(frozen=True)
class Plan:
    repo: Path
    good: str
    bad: str
    revs: list[str]  # after good, up to bad, oldest first
    reproducer: Reproducer
    tries: int
    why: str  # where `tries` comes from
    wrong: float  # the chance of a wrong step
    timeout: float | None = None

    @property
    def key(self) -> str:
        """One bisection's identity: the same question asked again resumes it."""
        words = [self.good, self.bad, self.reproducer.finding, self.reproducer.command,
                 structs.to_data(self.reproducer.perturbation), self.tries]
        return hashlib.sha256(json.dumps(words).encode()).hexdigest()[:16]

    def cost(self) -> str:
        steps = steps_needed(len(self.revs))
        return (f"{len(self.revs)} commits after --good; about {steps} commits judged (the bad one, then "
                f"halvings), each 1 reference build + up to {self.tries} tries: at most "
                f"{steps * (1 + self.tries)} builds, fewer where a try shows it early")


def tries_for(reproducer: Reproducer, wrong: float) -> tuple[int, str]:
    """Tries per commit, and why: at the measured rate a clean verdict is wrong below `wrong`."""
    if reproducer.rate is None:
        return UNMEASURED_TRIES, f"no measured rate: {UNMEASURED_TRIES} tries per commit"
    tries = tries_to_tell(reproducer.rate, wrong)
    return tries, (f"{reproducer.rate_from}: {tries} tries per commit miss a bug showing in {reproducer.rate:.1%} "
                   f"of builds with a chance below {wrong:.1%} per step, {WRONG:.0%} in all")


def plan(repo_path: Path, good: str, bad: str, reproducer: Reproducer, tries: int | None,
         timeout: float | None = None) -> Plan:
    """Checks the input (exit 2 for each mistake) before anything is built."""
    repo = git.toplevel(repo_path)
    dirty = git.dirty(repo)
    if dirty:
        raise UsageError(f"the worktree {repo} has uncommitted changes ({one_line(dirty[0])}"
                         f"{' ...' if len(dirty) > 1 else ''}): commit or stash them first")
    good_rev, bad_rev = git.commit(repo, good, "--good"), git.commit(repo, bad, "--bad")
    if good_rev == bad_rev or not git.is_ancestor(repo, good_rev, bad_rev):
        raise UsageError(f"--good {good} is not an ancestor of --bad {bad}")
    try:
        reproducer.source.resolve().relative_to(repo)
    except ValueError:
        raise UsageError(f"the finding's source {reproducer.source} is not in the checkout {repo}") from None
    revs = git.between(repo, good_rev, bad_rev)
    wrong = WRONG / steps_needed(len(revs))
    count, why = (tries, "--tries") if tries else tries_for(reproducer, wrong)
    return Plan(repo, good_rev, bad_rev, revs, reproducer, count, why, wrong, timeout)


def run(plan: Plan, store: Store, said: Callable[[Judged], None]) -> Bisection:
    """Bisect, reading back what an earlier run of the same bisection judged."""
    stored = store.bisect_steps(plan.key)

    def judged(rev: str) -> Judged:
        if rev in stored:
            verdict, tries, shown, detail = stored[rev]
            result = Judged(rev, verdict, tries, shown, detail, resumed=True)
        else:
            result = check.judge(plan.repo, rev, plan.reproducer, store, plan.tries, plan.wrong, plan.timeout)
            store.save_bisect_step(plan.key, rev, result.verdict, result.tries, result.shown, result.detail)
        said(result)
        return result

    return bisect(plan.revs, judged)
