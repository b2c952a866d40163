"""A fix for each culprit and hazard of a report, suggested without rebuilding: a patch to
the file that declares the step, written where the report says, or the remedy in words
where no build file the remedies know can be edited. The campaign writes them into its
report; `buildfuzz fix` (fixes.py) proves the patches by rebuilding.

A race culprit shares the fix of the hazard it is a step of: the hazard names the edge.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from msgspec import structs

from fuzzer.execute.workspace import Workspace
from fuzzer.fix import build_path, by_hand, cmake, ninja
from fuzzer.fix.archive import archive_flags
from fuzzer.fix.grouped import grouped_targets
from fuzzer.fix.line import in_words, line_remedy
from fuzzer.fix.patch import Remedy
from fuzzer.fix.prerequisite import missing_prerequisite, order_only
from fuzzer.fix.proof import statement
from fuzzer.fix.stabiliser import intrinsic
from fuzzer.fix.tree import CMAKE, MAKE, NINJA, NoPatch, Tree
from fuzzer.model import Culprit, Fix, FixStatus, Hazard, HazardType, Kind, LineStatus, Report

# (build system, hazard type or culprit kind) → the remedy written in that system's files; a
# hazard's remedy takes the Hazard, a culprit's the Culprit (Any: the key says which)
REMEDIES: dict[tuple[str, HazardType | Kind], Callable[[Any, Tree], Remedy]] = {
    (MAKE, HazardType.READ_BEFORE_WRITE): missing_prerequisite, (MAKE, HazardType.MKDIR_RACE): order_only,
    (MAKE, HazardType.DUPLICATE): grouped_targets, (MAKE, Kind.INTRINSIC): intrinsic,
    (MAKE, Kind.ORDER): archive_flags, (MAKE, Kind.UNKNOWN): archive_flags,  # an archive whose kind was not drawn
    (NINJA, HazardType.READ_BEFORE_WRITE): ninja.missing_edge, (NINJA, HazardType.MKDIR_RACE): ninja.directory_edge,
    (CMAKE, HazardType.READ_BEFORE_WRITE): cmake.missing_dependency, (CMAKE, Kind.INTRINSIC): cmake.stabiliser_env,
}
SYSTEMS = {MAKE: "a make build", NINJA: "a hand-written build.ninja", CMAKE: "a CMake project"}
PROVE = "`buildfuzz fix` proves it by rebuilding"


@dataclass(frozen=True)
class Fixed:
    """One finding's fix: what it is, typed (`fix`), and the patch's text to prove it with."""

    finding_id: str
    what: str  # the finding in one line: "[kind] command" or "type on file", with what the fix does
    fix: Fix
    patch: str = ""
    line: Fix | None = None  # an intrinsic Python step's: the patch to its divergent line (fix/line.py)
    line_patch: str = ""

    @property
    def status(self) -> str:
        """The fix in words: the report's `fix_status`."""
        return described(self.fix)


def described(fix: Fix) -> str:
    if fix.status == FixStatus.PROVEN and fix.proof is not None:
        return f"proven: {statement(fix.proof)}"
    if fix.status == FixStatus.NONE:
        return f"no patch: {fix.why}"
    if not fix.patch:
        return f"suggested, not proven: by hand: {fix.by_hand} (no patch: {fix.why})"
    return f"suggested, not proven: {fix.why or PROVE}"


@contextlib.contextmanager
def source_tree(workspace: Workspace, command: str) -> Iterator[Tree]:
    """The user's build as the remedies read it, from a copy of the source (make's database
    runs $(shell ...) lines); the copy is removed after."""
    with tempfile.TemporaryDirectory(prefix="buildfuzz-fix-source-") as scratch:
        copy = Workspace(workspace.source, Path(scratch) / "tree", exclude=workspace.exclude)
        yield Tree(copy.prepare(), command, str(workspace.path), source=str(workspace.source))


def suggest(entries: list[Culprit | Hazard], hazards: list[Hazard], tree: Tree, out: Path) -> list[Fixed]:
    """A fix for each entry, hazards first (a race culprit takes its hazard's), each patch
    written in `out` as `<finding-id>.patch`."""
    done: dict[str, Fixed] = {}
    for entry in sorted(entries, key=lambda e: isinstance(e, Culprit)):
        fixed = _suggest_one(entry, hazards, tree, out, done)
        done[entry.finding_id] = _with_line(fixed, entry, tree, out, done) if isinstance(entry, Culprit) else fixed
    return list(done.values())


def _with_line(fixed: Fixed, culprit: Culprit, tree: Tree, out: Path, done: dict[str, Fixed]) -> Fixed:
    """The culprit's fix with its divergent line's, where the line search found one: the
    patch to the generator beside the build file's, one file for the culprits of one line."""
    if culprit.line is None or culprit.line.status != LineStatus.FOUND:
        return fixed
    try:
        remedy = line_remedy(culprit, tree)
    except NoPatch as e:
        words = in_words(culprit.line)
        return replace(fixed, line=Fix(FixStatus.SUGGESTED if words else FixStatus.NONE, by_hand=words, why=str(e)))
    same = next((f for f in done.values() if f.line_patch == remedy.patch), None)
    if same is not None:
        return replace(fixed, line=same.line, line_patch=same.line_patch)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{culprit.finding_id}.line.patch"
    path.write_text(remedy.patch, encoding="utf-8")
    fix = Fix(FixStatus.SUGGESTED, remedy.summary, str(path.resolve()), remedy.file)
    return replace(fixed, line=fix, line_patch=remedy.patch)


def _suggest_one(entry: Culprit | Hazard, hazards: list[Hazard], tree: Tree, out: Path,
                 done: dict[str, Fixed]) -> Fixed:
    what = f"{entry.type} on {entry.file}" if isinstance(entry, Hazard) else f"[{entry.kind}] {entry.command}"
    if isinstance(entry, Culprit) and entry.kind == Kind.RACE:
        hazard = next((h for h in hazards if entry.command in (h.reader, h.writer, *h.steps)), None)
        if hazard is not None and hazard.finding_id in done:
            return Fixed(entry.finding_id, what, done[hazard.finding_id].fix, done[hazard.finding_id].patch)
    untested = by_hand.untested(entry)
    remedy = _remedy(entry, tree)
    if not remedy.patch:
        words = by_hand.remedy(entry)
        status = FixStatus.SUGGESTED if words else FixStatus.NONE
        return Fixed(entry.finding_id, what, Fix(status, by_hand=words, why=remedy.reason, upstream=remedy.upstream,
                                                 untested=untested))
    same = next((fixed for fixed in done.values() if fixed.patch == remedy.patch), None)
    if same is not None:  # the steps of one rule: one patch, listed once in the report
        return Fixed(entry.finding_id, f"{what}: {same.fix.summary}", same.fix, same.patch)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{entry.finding_id}.patch"
    path.write_text(remedy.patch, encoding="utf-8")
    fix = Fix(FixStatus.SUGGESTED, remedy.summary, str(path.resolve()), remedy.file, upstream=remedy.upstream,
              untested=untested)
    return Fixed(entry.finding_id, f"{what}: {remedy.summary}", fix, remedy.patch)


def _remedy(entry: Culprit | Hazard, tree: Tree) -> Remedy:
    kind = entry.type if isinstance(entry, Hazard) else entry.kind
    if kind == Kind.BUILD_PATH:  # whatever the build system: the flag goes where the directory is made
        return build_path.prefix_map(entry)  # type: ignore[arg-type]  # a hazard is never of a culprit's kind
    # a hazard whose rules make's database named is a make build's, below a wrapper too
    system = tree.system or (MAKE if isinstance(entry, Hazard) and entry.rules else "")
    try:
        if not system:
            raise NoPatch("the build is not one make or ninja call, nor a CMake project built by cmake: "
                          "no build file the remedies know how to edit")
        remedy = REMEDIES.get((system, kind))
        if remedy is None:
            what = f"{kind} hazard" if isinstance(entry, Hazard) else f"{kind} culprit"
            outside = " outside a hazard" if isinstance(entry, Culprit) and kind == Kind.RACE else ""
            raise NoPatch(f"no remedy is known for a {what}{outside} in {SYSTEMS[system]}")
        return remedy(entry, tree)
    except NoPatch as e:
        return Remedy(entry.finding_id, "", reason=str(e))


def with_fixes(report: Report, fixed: list[Fixed]) -> Report:
    """The report with each fixed culprit's and hazard's `remedy`, `fix` and `fix_status`."""
    by_id = {f.finding_id: f for f in fixed}

    def updated(entry):
        f = by_id.get(entry.finding_id)
        if f is None:
            return entry
        entry = structs.replace(entry, remedy=f.fix, fix=f.fix.patch, fix_status=f.status)
        if f.line is not None and isinstance(entry, Culprit) and entry.line is not None:
            entry = structs.replace(entry, line=structs.replace(entry.line, fix=f.line))
        return entry

    return structs.replace(report, culprits=[updated(c) for c in report.culprits],
                           hazards=[updated(h) for h in report.hazards])
