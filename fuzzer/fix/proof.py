"""Proof of a fix: the finding's own schedule, before the patch and after it.

Before: the schedule that showed the finding (a hazard's failing or divergent run, held or
not; the reference's settings for an intrinsic step, which varies by itself), built `before`
times from the user's source and judged against the campaign's stored reference. After: a
patched copy's own reference, then the same schedule `after` times, judged against it.
Proven only when the finding reproduced before and never after; 0 of k after bounds the
rate it still shows at below about 3/k (exact: fuzzer.stats).

Whole builds rather than step replays: the remedy changes the Makefile, and a step replay
runs the traced argv, which would not see it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.explain.builds import Selection
from fuzzer.fix import patch
from fuzzer.plan import Perturbation
from fuzzer.stats import CONFIDENCE, percent_above, upper_bound_zero

BEFORE, AFTER = 3, 12  # 0 of 12 after: below 22% at 95%


@dataclass(frozen=True)
class Proof:
    proven: bool
    statement: str  # "before 3/3 reproduced; after 0/12, ..." or "suggested, not proven: why"


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


def prove(proving: Proving, remedy_patch: str, perturbation: Perturbation,
          before: int = BEFORE, after: int = AFTER) -> Proof:
    workspace, reference = proving.workspace, proving.reference
    if workspace.in_place:
        return Proof(False, "suggested, not proven: an --in-place campaign builds in your tree, "
                            "and a patch is proven on a copy only")
    if not reference.ok:
        return Proof(False, "suggested, not proven: the campaign's reference build failed")
    with proving.builder(workspace) as build:
        shown = sum(bool(_shows(proving.selection, build(perturbation), reference)) for _ in range(before))
    if shown == 0:
        return Proof(False, f"suggested, not proven: before the patch 0/{before} builds reproduced it "
                            f"({perturbation.describe()}), so the patch has nothing to be proven against")
    with tempfile.TemporaryDirectory(prefix="buildfuzz-fix-") as scratch:
        patched = Workspace(workspace.source, Path(scratch) / "tree", exclude=workspace.exclude)
        patch.apply(remedy_patch, patched.prepare())
        with proving.builder(replace(workspace, source=patched.path)) as build:
            patched_reference = build(reference.perturbation)
            if not patched_reference.ok:
                return Proof(False, "suggested, not proven: the patched reference build "
                                    f"{patched_reference.status.value}")
            for tried in range(after):  # the first build that still shows it settles the question
                still = _shows(proving.selection, build(perturbation), patched_reference)
                if still:
                    return Proof(False, f"suggested, not proven: before {shown}/{before} reproduced; after the "
                                        f"patch, build {tried + 1} of {after} still showed it ({still})")
    bound = percent_above(upper_bound_zero(after))
    return Proof(True, f"proven: before {shown}/{before} reproduced; after 0/{after}, divergence below {bound} "
                       f"at {CONFIDENCE:.0%} ({perturbation.describe()})")


def _shows(selection: Selection, record: RunRecord, reference: RunRecord) -> str:
    """How the build differs from the reference ("" when it matches): its failure, or the first
    file, its upload records settled against the reference's as the campaign judged its runs."""
    if not record.ok:
        return f"it {record.status.value}"
    differing = selection.differing(reference.built, record.built, reference.built)
    return f"{differing[0]} differs" if differing else ""

