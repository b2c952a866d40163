"""`buildfuzz fix`: a remedy for each culprit and hazard of a stored campaign, written as a
patch beside the report, proven by rebuilds, and applied to the user's tree only when asked.

A race culprit shares the patch of the hazard it is a step of: the hazard names the edge.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from msgspec import structs

from fuzzer.errors import UsageError
from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.fix import build_path, cmake, ninja
from fuzzer.fix.archive import archive_flags
from fuzzer.fix.grouped import grouped_targets
from fuzzer.fix.patch import PatchError, Remedy, apply
from fuzzer.fix.prerequisite import missing_prerequisite, order_only
from fuzzer.fix.proof import AFTER, BEFORE, Proof, Proving, prove
from fuzzer.fix.stabiliser import stabiliser_prefix
from fuzzer.fix.tree import CMAKE, MAKE, NINJA, NoPatch, Tree
from fuzzer.model import Culprit, Hazard, HazardType, Kind
from fuzzer.plan import Perturbation
from fuzzer.report import json_format
from fuzzer.report.model import Report
from fuzzer.store import Store

# (build system, hazard type or culprit kind) → the remedy written in that system's files
REMEDIES = {
    (MAKE, HazardType.READ_BEFORE_WRITE): missing_prerequisite, (MAKE, HazardType.MKDIR_RACE): order_only,
    (MAKE, HazardType.DUPLICATE): grouped_targets, (MAKE, Kind.INTRINSIC): stabiliser_prefix,
    (MAKE, Kind.ORDER): archive_flags,
    (NINJA, HazardType.READ_BEFORE_WRITE): ninja.missing_edge, (NINJA, HazardType.MKDIR_RACE): ninja.directory_edge,
    (CMAKE, HazardType.READ_BEFORE_WRITE): cmake.missing_dependency, (CMAKE, Kind.INTRINSIC): cmake.stabiliser_env,
}
SYSTEMS = {MAKE: "a make build", NINJA: "a hand-written build.ninja", CMAKE: "a CMake project"}
CAMPAIGN_RUN = re.compile(r"run (\d+)")
TRACED_RERUN = re.compile(r"traced rerun \((.+)\)")  # explain's label: a divergent run's perturbation, traced
PROVEN = "proven"


@dataclass(frozen=True)
class Fixed:
    """One finding's remedy and what became of it."""

    finding_id: str
    what: str
    status: str  # "proven: ..." | "suggested, not proven: ..." | "no patch: ..."
    path: str = ""  # the patch file, when there is a patch
    upstream: str = ""


def fix_findings(report: Report, wanted: tuple[str, ...], runs: tuple[RunRecord, ...], groups: dict[int, str | None],
                 proving: Proving, out: Path, before: int = BEFORE, after: int = AFTER) -> list[Fixed]:
    """A remedy for each of the report's culprits and hazards (`wanted`: by id; none: all),
    its patch written in `out`, proven on the campaign's `runs` (`groups`: each one's digest
    group, by index) unless no stored run showed it."""
    entries = _entries(report, wanted)
    with tempfile.TemporaryDirectory(prefix="buildfuzz-fix-source-") as scratch:
        copy = Workspace(proving.workspace.source, Path(scratch) / "tree", exclude=proving.workspace.exclude)
        tree = Tree(copy.prepare(), report.command, str(proving.workspace.path))
        done: dict[str, Fixed] = {}
        for entry in sorted(entries, key=lambda e: isinstance(e, Culprit)):  # hazards first: races share them
            perturbation = _schedule(runs, groups, entry)
            done[entry.finding_id] = _fix_one(proving, perturbation, report, entry, tree, out, done, before, after)
    return list(done.values())


def _entries(report: Report, wanted: tuple[str, ...]) -> list[Culprit | Hazard]:
    entries = [*report.hazards, *report.culprits]
    known = {e.finding_id for e in entries}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise UsageError(f"no culprit or hazard {unknown[0]!r} in campaign {report.campaign} "
                         f"(its ids: {', '.join(sorted(known)) or 'none'})")
    return [e for e in entries if not wanted or e.finding_id in wanted]


def _fix_one(proving, perturbation, report, entry, tree, out, done, before, after) -> Fixed:
    what = f"{entry.type} on {entry.file}" if isinstance(entry, Hazard) else f"[{entry.kind}] {entry.command}"
    if isinstance(entry, Culprit) and entry.kind == Kind.RACE:
        hazard = next((h for h in report.hazards if entry.command in (h.reader, h.writer, *h.steps)), None)
        if hazard is not None and hazard.finding_id in done:
            return replace(done[hazard.finding_id], finding_id=entry.finding_id, what=what)
    remedy = _remedy(entry, tree)
    if not remedy.patch:
        return Fixed(entry.finding_id, what, f"no patch: {remedy.reason}", upstream=remedy.upstream)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{entry.finding_id}.patch"
    path.write_text(remedy.patch, encoding="utf-8")
    if perturbation is None:
        proof = Proof(False, "suggested, not proven: no stored run failed or differed with it (a latent hazard): "
                             "nothing to prove the patch against")
    else:
        proof = prove(proving, remedy.patch, perturbation, before, after)
    return Fixed(entry.finding_id, f"{what}: {remedy.summary}", proof.statement, str(path.resolve()), remedy.upstream)


def _remedy(entry: Culprit | Hazard, tree: Tree) -> Remedy:
    kind = entry.type if isinstance(entry, Hazard) else entry.kind
    if kind == Kind.BUILD_PATH:  # whatever the build system: the flag goes where the directory is made
        return build_path.prefix_map(entry)  # type: ignore[arg-type]
    try:
        if not tree.system:
            raise NoPatch("the build is not one make or ninja call, nor a CMake project built by cmake: "
                          "no build file the remedies know how to edit")
        remedy = REMEDIES.get((tree.system, kind))
        if remedy is None:
            what = f"{kind} hazard" if isinstance(entry, Hazard) else f"{kind} culprit"
            outside = " outside a hazard" if isinstance(entry, Culprit) and kind == Kind.RACE else ""
            raise NoPatch(f"no remedy is known for a {what}{outside} in {SYSTEMS[tree.system]}")
        return remedy(entry, tree)
    except NoPatch as e:
        return Remedy(entry.finding_id, "", reason=str(e))


def _schedule(stored: tuple[RunRecord, ...], groups: dict[int, str | None],
              entry: Culprit | Hazard) -> Perturbation | None:
    """The settings that showed the finding: an intrinsic step's reference settings (it
    varies by itself); else one of its stored runs (a hazard's, or any of the campaign's for
    a culprit) that failed or differs from the reference: a held run first (it shows the
    conflict on purpose), then in the order of its evidence. A hazard that only the traced
    rerun of a divergent run showed takes the first run with that rerun's settings."""
    if isinstance(entry, Culprit) and entry.kind == Kind.INTRINSIC:
        return stored[0].perturbation
    telling = {r.index: r for r in sorted(stored, key=lambda r: r.index)
               if r.index > 0 and groups[r.index] != groups[0]}
    if isinstance(entry, Culprit):
        return next(iter(telling.values())).perturbation if telling else None
    cited = [telling[i] for label in entry.runs
             if (m := CAMPAIGN_RUN.fullmatch(label)) and (i := int(m[1])) in telling]
    traced = {m[1] for label in entry.runs if (m := TRACED_RERUN.fullmatch(label))}
    shown = sorted(cited, key=lambda r: "hold" not in dict(r.perturbation.variations)) or \
        [r for r in telling.values() if r.perturbation.describe() in traced]
    return shown[0].perturbation if shown else None


def with_fixes(report: Report, fixed: list[Fixed]) -> Report:
    by_id = {f.finding_id: f for f in fixed}

    def updated(entry):
        f = by_id.get(entry.finding_id)
        return structs.replace(entry, fix=f.path, fix_status=f.status) if f else entry

    return structs.replace(report, culprits=[updated(c) for c in report.culprits],
                           hazards=[updated(h) for h in report.hazards])


def apply_fix(store: Path, campaign_id: int | None, finding_id: str, force: bool) -> Path:
    """Apply a finding's proven patch to the campaign's source tree (an unproven one with
    `force`); refused when the lines it changes are not what it was made from."""
    opened = Store(store)
    try:
        row = opened.require_campaign(campaign_id)
        data = opened.report(row.id)
    finally:
        opened.close()
    report = json_format.from_builtins(data) if data else None
    entry = next((e for e in [*report.hazards, *report.culprits] if e.finding_id == finding_id), None) \
        if report else None
    if entry is None:
        raise UsageError(f"no culprit or hazard {finding_id!r} in campaign {row.id}")
    if not entry.fix:
        raise UsageError(f"{finding_id} has no patch ({entry.fix_status or 'run buildfuzz fix first'})")
    if not entry.fix_status.startswith(PROVEN) and not force:
        raise UsageError(f"{finding_id}'s patch is {entry.fix_status.split(':')[0]}: --force applies it anyway")
    try:
        return apply(Path(entry.fix).read_text(encoding="utf-8"), Path(row.source))
    except (OSError, PatchError) as e:
        raise UsageError(f"{finding_id}'s patch does not apply: {e}") from None
