"""One commit judged by real builds: a detached worktree of it outside the user's checkout,
copied into the store's workspace as every campaign build is, the reference build, then up
to `tries` builds under the reproducer's perturbation, stopping at the first that shows
the finding. The worktree and the workspace are removed whatever happens."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from fuzzer.bisect.reproducer import Reproducer
from fuzzer.bisect.search import BAD, GOOD, SKIP, Judged
from fuzzer.execute.local import BuildSpec, LocalExecutor, default_timeout
from fuzzer.execute.run import RunRequest
from fuzzer.execute.workspace import Workspace
from fuzzer.model import RunKind
from fuzzer.plan import Perturbation
from fuzzer.stats import percent_above_tenth, rate_excluded
from fuzzer.store import Store
from fuzzer.tools import git


@contextmanager
def checked_out(repo: Path, rev: str) -> Iterator[Path]:
    """A detached worktree of `rev` in a temporary directory, removed and pruned after."""
    parent = Path(tempfile.mkdtemp(prefix="buildfuzz-bisect-"))
    tree = parent / (repo.name or "tree")
    try:
        git.add_worktree(repo, rev, tree)
        yield tree
    finally:
        git.remove_worktree(repo, tree)
        shutil.rmtree(parent, ignore_errors=True)


def judge(repo: Path, rev: str, reproducer: Reproducer, store: Store, tries: int, wrong: float,
          timeout: float | None) -> Judged:
    with checked_out(repo, rev) as tree:
        source = tree / reproducer.source.resolve().relative_to(repo)
        workspace = Workspace(source, store.root.resolve() / "workspace" / (reproducer.source.resolve().name or "tree"),
                              None, frozenset({store.root.resolve()}))
        spec = BuildSpec(reproducer.command, workspace, store.root / "bisect-logs" / rev[:12], timeout)
        executor = LocalExecutor(spec)
        try:
            return _builds(executor, rev, reproducer, tries, wrong, timeout)
        finally:
            executor.close()
            workspace.remove()


def _builds(executor: LocalExecutor, rev: str, reproducer: Reproducer, tries: int, wrong: float,
            timeout: float | None) -> Judged:
    reference = executor.run(RunRequest(0, _reference(reproducer.perturbation), RunKind.REPLAY, timeout=timeout))
    if not reference.ok:
        return Judged(rev, SKIP, 0, 0, f"skipped: the reference build {reference.status.value} "
                                      f"(exit {reference.exit_code}), as `git bisect skip` would")
    after = default_timeout(timeout, reference.wall_s)
    for attempt in range(1, tries + 1):
        record = executor.run(RunRequest(attempt, reproducer.perturbation, RunKind.REPLAY, timeout=after))
        if reproducer.shows(record, reference):
            return Judged(rev, BAD, attempt, 1, f"bad: showed at try {attempt} of up to {tries}")
    return Judged(rev, GOOD, tries, 0, f"good: 0 of {tries} tries showed it (a rate of "
                                       f"{percent_above_tenth(rate_excluded(tries, wrong))} or more would have "
                                       f"shown but for a {wrong:.0%} chance)")


def _reference(perturbation: Perturbation) -> Perturbation:
    """The same commit's reference: one job, the same CPUs, nothing varied."""
    return Perturbation(jobs=1, cpus=perturbation.cpus)
