"""Proof of a fix: the finding's own schedule, before the patch and after it.

Before: the schedule that showed the finding (a hazard's failing or divergent run, held or
not; the reference's settings for an intrinsic step, which varies by itself), built `before`
times from the user's source and judged against the campaign's stored reference. After: a
patched copy's own reference, then the same schedule `after` times, judged against it.
Proven only when the finding reproduced before and never after; 0 of k after bounds the
rate it still shows at below about 3/k (exact: fuzzer.stats).

Whole builds rather than step replays: the remedy changes the Makefile, and a step replay
runs the traced argv, which would not see it.

A configured tree names its own absolute path (`fix/configured.py`): a copy elsewhere would
include, read and reconfigure from the user's unpatched tree. Each build of its patched copy
has its fresh tree bound at the tree's own path too, in its mount namespace
(`Workspace.seen_at`), so it builds as in place there: those paths are the patched files,
and what it writes through them (a reconfigure's `touch /src/Makefile`) stays in its own
tree, never in the user's nor in the next build's; where
builds cannot be given one, the proof says it was not possible, and why.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path

from msgspec import structs

from fuzzer import model
from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.explain.builds import Selection
from fuzzer.fix import configured, patch
from fuzzer.plan import Perturbation
from fuzzer.stats import CONFIDENCE, percent_above, upper_bound_zero

BEFORE, AFTER = 3, 12  # 0 of 12 after: below 22% at 95%


@dataclass(frozen=True)
class Proved:
    """What the rebuilds showed (`counts`, None when none were made) and, when the patch is
    not proven, why ("" when it is)."""

    counts: model.Proof | None
    why: str = ""

    @property
    def proven(self) -> bool:
        return self.counts is not None and not self.why


Build = Callable[[Perturbation], RunRecord]


@dataclass(frozen=True)
class Proving:
    """What a proof stands on: the campaign's reference run, which files count, its
    workspace, and its builds (`builder(workspace)`: builds of that workspace's source at
    the campaign's path, the tree removed when the block ends)."""

    reference: RunRecord
    selection: Selection
    workspace: Workspace
    builder: Callable[[Workspace], AbstractContextManager[Build]]
    unbindable: str = ""  # why the builds cannot see a copy at the tree's own path ("" when they can)


def prove(proving: Proving, remedy_patch: str, perturbation: Perturbation,
          before: int = BEFORE, after: int = AFTER) -> Proved:
    workspace, reference = proving.workspace, proving.reference
    if workspace.in_place:
        return Proved(None, "an --in-place campaign builds in your tree, and a patch is proven on a copy only")
    if not reference.ok:
        return Proved(None, "the campaign's reference build failed")
    named = configured.naming_itself(workspace.source, workspace.exclude)
    if named is not None and proving.unbindable:
        return Proved(None, f"not possible here: {named} names the tree's own path ({workspace.source}), so a "
                            f"patched copy elsewhere would still build from the unpatched tree, and it cannot be "
                            f"built at that path: {proving.unbindable}")
    settings = perturbation.describe()
    with proving.builder(workspace) as build:
        showing = [r for r in (build(perturbation) for _ in range(before)) if _shows(proving.selection, r, reference)]
    shown = len(showing)
    # a finding every build it reproduced in showed by failing shows by failing after the patch
    # too: a difference then (a clock stamp every build differs in) is another finding's
    by_failure = all(not r.ok for r in showing)
    counts = model.Proof(settings, before, shown, at=str(workspace.source) if named is not None else "",
                         by_failure=by_failure)
    if shown == 0:
        return Proved(counts, f"before the patch 0/{before} builds reproduced it ({settings}), so the patch has "
                              "nothing to be proven against")
    with tempfile.TemporaryDirectory(prefix="buildfuzz-fix-") as scratch:
        patched = Workspace(workspace.source, Path(scratch) / "tree", exclude=workspace.exclude)
        patch.apply(remedy_patch, patched.prepare())
        seen_at = workspace.source if named is not None else None
        with proving.builder(replace(workspace, source=patched.path, seen_at=seen_at)) as build:
            patched_reference = build(reference.perturbation)
            if not patched_reference.ok:
                return Proved(counts, f"the patched reference build {patched_reference.status.value}")
            for tried in range(after):  # the first build that still shows it settles the question
                still = _shows(proving.selection, build(perturbation), patched_reference, by_failure)
                if still:
                    return Proved(structs.replace(counts, after=tried + 1, still=1),
                                  f"before {shown}/{before} reproduced; after the patch, build {tried + 1} of "
                                  f"{after} still showed it ({still})")
    return Proved(structs.replace(counts, after=after, bound=upper_bound_zero(after)))


def statement(counts: model.Proof) -> str:
    """A proven patch's rebuilds in one line."""
    at = f"; the patched copy built at {counts.at}, the path its files name" if counts.at else ""
    at += "; judged by failures, as it showed before: a file differing is another finding's" if counts.by_failure else ""
    return (f"before {counts.reproduced}/{counts.before} reproduced; after 0/{counts.after}, divergence below "
            f"{percent_above(counts.bound or 1.0)} at {CONFIDENCE:.0%} ({counts.settings}{at})")


def _shows(selection: Selection, record: RunRecord, reference: RunRecord, by_failure: bool = False) -> str:
    """How the build differs from the reference ("" when it matches): its failure, or (unless
    only a failure shows the finding) the first file, its upload records settled against the
    reference's as the campaign judged its runs."""
    if not record.ok:
        return f"it {record.status.value}"
    if by_failure:
        return ""
    differing = selection.differing(reference.built, record.built, reference.built)
    return f"{differing[0]} differs" if differing else ""

