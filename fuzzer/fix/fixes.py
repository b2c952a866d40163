"""`buildfuzz fix`: the fix suggested for each culprit and hazard of a stored campaign
(suggest.py), its patch proven by rebuilds, and applied to the user's tree only when asked."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from msgspec import structs

from fuzzer.errors import UsageError
from fuzzer.execute.run import RunRecord
from fuzzer.fix import suggest
from fuzzer.fix.patch import PatchError, apply
from fuzzer.fix.proof import AFTER, BEFORE, Proving, prove
from fuzzer.fix.suggest import Fixed
from fuzzer.model import Culprit, Fix, FixStatus, Hazard, Kind, Report
from fuzzer.plan import Perturbation
from fuzzer.report import json_format
from fuzzer.store import Store

TRACED_RERUN = re.compile(r"traced rerun \((.+)\)")  # explain's label: a divergent run's perturbation, traced


def fix_findings(report: Report, wanted: tuple[str, ...], runs: tuple[RunRecord, ...], groups: dict[int, str | None],
                 proving: Proving, out: Path, before: int = BEFORE, after: int = AFTER) -> list[Fixed]:
    """A fix for each of the report's culprits and hazards (`wanted`: by id; none: all),
    its patch written in `out`, proven on the campaign's `runs` (`groups`: each one's digest
    group, by index) unless no stored run showed it. A race culprit sharing its hazard's
    patch shares its proof."""
    entries = _entries(report, wanted)
    with suggest.source_tree(proving.workspace, report.command) as tree:
        suggested = suggest.suggest(entries, report.hazards, tree, out)
    by_id = {e.finding_id: e for e in entries}
    proven: dict[str, Fix] = {}  # by patch: a race culprit's is its hazard's
    fixed = []
    for found in suggested:
        perturbation = _schedule(runs, groups, by_id[found.finding_id])
        for fix, text in ((found.fix, found.patch), (found.line, found.line_patch)):
            if fix is not None and text and fix.patch not in proven:
                proven[fix.patch] = _proven(fix, text, proving, perturbation, before, after)
        line = proven[found.line.patch] if found.line is not None and found.line_patch else found.line
        fixed.append(replace(found, fix=proven[found.fix.patch] if found.patch else found.fix, line=line))
    return fixed


def _entries(report: Report, wanted: tuple[str, ...]) -> list[Culprit | Hazard]:
    entries: list[Culprit | Hazard] = [*report.hazards, *report.culprits]
    known = {e.finding_id for e in entries}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise UsageError(f"no culprit or hazard {unknown[0]!r} in campaign {report.campaign} "
                         f"(its ids: {', '.join(sorted(known)) or 'none'})")
    return [e for e in entries if not wanted or e.finding_id in wanted]


def _proven(fix: Fix, patch: str, proving: Proving, perturbation: Perturbation | None, before: int,
            after: int) -> Fix:
    if perturbation is None:
        return structs.replace(fix, status=FixStatus.NOT_PROVEN,
                               why="no stored run failed or differed with it (a latent hazard): nothing to prove "
                                   "the patch against")
    proved = prove(proving, patch, perturbation, before, after)
    status = FixStatus.PROVEN if proved.proven else FixStatus.NOT_PROVEN
    return structs.replace(fix, status=status, why=proved.why, proof=proved.counts)


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
    cited = [telling[i] for i in entry.runs if i in telling]
    traced = {m[1] for label in entry.traced if (m := TRACED_RERUN.fullmatch(label))}
    shown = sorted(cited, key=lambda r: "hold" not in dict(r.perturbation.variations)) or \
        [r for r in telling.values() if r.perturbation.describe() in traced]
    return shown[0].perturbation if shown else None


def apply_fix(store: Path, campaign_id: int | None, finding_id: str, force: bool, line: bool = False) -> Path:
    """Apply a finding's proven patch to the campaign's source tree (an unproven one with
    `force`), or with `line` its divergent line's patch to the generator (in the tree: a
    generator outside it has none); refused when the lines it changes are not what it was
    made from."""
    opened = Store(store)
    try:
        row = opened.require_campaign(campaign_id)
        data = opened.report(row.id)
    finally:
        opened.close()
    report = json_format.from_builtins(data) if data else None
    entries: list[Culprit | Hazard] = [*report.hazards, *report.culprits] if report else []
    entry = next((e for e in entries if e.finding_id == finding_id), None)
    if entry is None:
        raise UsageError(f"no culprit or hazard {finding_id!r} in campaign {row.id}")
    patch, status, proven = _chosen(entry, line)
    if not patch:
        raise UsageError(f"{finding_id} has no {'line ' if line else ''}patch ({status or 'run buildfuzz fix first'})")
    if not proven and not force:
        raise UsageError(f"{finding_id}'s {'line ' if line else ''}patch is {status.split(':')[0]}: --force applies "
                         "it anyway")
    try:
        return apply(Path(patch).read_text(encoding="utf-8"), Path(row.source))
    except (OSError, PatchError) as e:
        raise UsageError(f"{finding_id}'s patch does not apply: {e}") from None


def _chosen(entry: Culprit | Hazard, line: bool) -> tuple[str, str, bool]:
    """The patch to apply, its status in words, and whether it is proven."""
    if not line:
        return entry.fix, entry.fix_status, _proven_patch(entry)
    fix = entry.line.fix if isinstance(entry, Culprit) and entry.line is not None else None
    if fix is None:
        return "", "no divergent line was found", False
    return fix.patch, f"{fix.status}: {fix.why}", fix.status == FixStatus.PROVEN


def _proven_patch(entry: Culprit | Hazard) -> bool:
    """Proven by `buildfuzz fix`; a report stored before fixes were typed says so in words only."""
    if entry.remedy is not None:
        return entry.remedy.status == FixStatus.PROVEN
    return entry.fix_status.startswith("proven")
