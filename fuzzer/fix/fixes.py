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
        if found.patch and found.fix.patch not in proven:
            perturbation = _schedule(runs, groups, by_id[found.finding_id])
            proven[found.fix.patch] = _proven(found, proving, perturbation, before, after)
        fixed.append(replace(found, fix=proven[found.fix.patch]) if found.patch else found)
    return fixed


def _entries(report: Report, wanted: tuple[str, ...]) -> list[Culprit | Hazard]:
    entries: list[Culprit | Hazard] = [*report.hazards, *report.culprits]
    known = {e.finding_id for e in entries}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise UsageError(f"no culprit or hazard {unknown[0]!r} in campaign {report.campaign} "
                         f"(its ids: {', '.join(sorted(known)) or 'none'})")
    return [e for e in entries if not wanted or e.finding_id in wanted]


def _proven(found: Fixed, proving: Proving, perturbation: Perturbation | None, before: int, after: int) -> Fix:
    if perturbation is None:
        return structs.replace(found.fix, status=FixStatus.NOT_PROVEN,
                               why="no stored run failed or differed with it (a latent hazard): nothing to prove "
                                   "the patch against")
    proved = prove(proving, found.patch, perturbation, before, after)
    status = FixStatus.PROVEN if proved.proven else FixStatus.NOT_PROVEN
    return structs.replace(found.fix, status=status, why=proved.why, proof=proved.counts)


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
    entries: list[Culprit | Hazard] = [*report.hazards, *report.culprits] if report else []
    entry = next((e for e in entries if e.finding_id == finding_id), None)
    if entry is None:
        raise UsageError(f"no culprit or hazard {finding_id!r} in campaign {row.id}")
    if not entry.fix:
        raise UsageError(f"{finding_id} has no patch ({entry.fix_status or 'run buildfuzz fix first'})")
    if not _proven_patch(entry) and not force:
        raise UsageError(f"{finding_id}'s patch is {entry.fix_status.split(':')[0]}: --force applies it anyway")
    try:
        return apply(Path(entry.fix).read_text(encoding="utf-8"), Path(row.source))
    except (OSError, PatchError) as e:
        raise UsageError(f"{finding_id}'s patch does not apply: {e}") from None


def _proven_patch(entry: Culprit | Hazard) -> bool:
    """Proven by `buildfuzz fix`; a report stored before fixes were typed says so in words only."""
    if entry.remedy is not None:
        return entry.remedy.status == FixStatus.PROVEN
    return entry.fix_status.startswith("proven")
