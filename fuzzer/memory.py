"""memory: what earlier campaigns of the same source and command found, like hypothesis's
example database, so that each night starts from what the last ones learned.

- A new campaign replays, right after its reference, the perturbations that diverged or
  failed before (latest campaign first, each once, at most REMEMBERED): a known bug shows
  again at build 2, and a fix is checked against the very schedules that showed the bug.
- Each finding (fuzzer/findings.py gives its stable id) has a first and a last sighting
  and a status: `new` in the campaign that first shows it (or shows it again after a fix),
  `still` when seen again, `fixed` when a finished campaign that could have seen it
  (same compared files; traced, for culprits and hazards) did not. Only a campaign with a
  verdict changes statuses.
- Findings in the --baseline, or accepted in the store (`buildfuzz accept`), are known:
  builds that differ only in known ways exit 0 (Report.exit_code); `campaign/stored.py`
  accepts a stored campaign's findings and writes baselines.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Callable, Iterator

from fuzzer import axes, rates, structs
from fuzzer.findings import ARTIFACT, CULPRIT, FAILURE, FIXED, HAZARD, METADATA, NEW, STILL, Identity
from fuzzer.plan import Perturbation, Planned, Space, reference
from fuzzer.model import Finding, FindingKind, FindingStatus, Reason, RunStatus, Verdict
from fuzzer.store import FindingRow, Store

REMEMBERED = 5  # perturbations replayed first; the seeded schedule must still get most of the runs
LOOK_BACK = 20  # earlier reports read at most: a year of green nights must not slow every start


@dataclass(frozen=True)
class Subject:
    """Whose memory: one campaign of a source and command, in its store."""

    store: Store
    campaign: int
    source: str  # resolved, as the store's campaign row holds it
    command: str


@dataclass(frozen=True)
class Look:
    """What a concluded campaign can say of its findings."""

    verdict: Verdict
    localized: bool  # its localization traced builds
    scope: str  # what it compared (`scope`)
    known: frozenset[str]  # finding ids the --baseline lists
    replayed: int  # runs it made of the remembered perturbations
    tally: rates.Tally = rates.Tally()  # how often each finding showed in its builds (fuzzer/rates.py)
    # Ctrl-C cut its builds: its verdict is shown, but what it did not build is no evidence that
    # a finding is fixed, so it records nothing; the campaign `--resume` completes records
    resumable: bool = False


@dataclass(frozen=True)
class Recollection:
    """The report's part from the memory: its findings with statuses, a note, and whether no
    earlier campaign of this source and command stored a report (every finding is new)."""

    findings: list[Finding]
    notes: list[str]
    first: bool = False


@dataclass(frozen=True)
class Sighting:
    """One campaign's look at the findings."""

    campaign: int
    at: float  # time.time()
    scope: str  # what it compared (`scope`)
    final: bool  # it has a verdict and ran its builds: it records statuses
    can_fix: frozenset[str] = frozenset()  # kinds of finding it would have seen, were they still there


def remembered_first(subject: Subject, fresh: bool, candidates: Iterator[Planned], runs: int, space: Space,
                     varied: tuple[axes.Axis, ...]) -> Iterator[Planned]:
    """`candidates` with the remembered perturbations right after the reference. A `fresh`
    campaign (no run yet) of `runs` runs chooses them and stores its choice; a resumed one
    reads it back, so it replays the very plan it started with."""
    if fresh:
        limit = min(REMEMBERED, max(1, (runs - 1) // 2))
        fits = functools.partial(_fits, space=space, varied={axis.name for axis in varied})
        subject.store.save_remembered(subject.campaign, _recall(subject, fits, limit))
    remembered = [Planned(p, Reason.REMEMBERED) for p, _ in subject.store.remembered(subject.campaign)]
    return itertools.chain(itertools.islice(candidates, 1), remembered, candidates)


def _recall(subject: Subject, fits: Callable[[Perturbation], bool], limit: int) -> list[tuple[Perturbation, int]]:
    """Up to `limit` perturbations that diverged or failed in earlier campaigns, latest first,
    each with the campaign it comes from. As in hypothesis's database, one that a later
    campaign built again without a difference is forgotten (the bug was fixed)."""
    chosen: dict[Perturbation, int] = {}
    cleared: set[Perturbation] = set()
    earlier = subject.store.reports_before(subject.source, subject.command, subject.campaign)
    for origin, report in itertools.islice(earlier, LOOK_BACK):
        telling, matched = _outcomes(report)
        for perturbation in telling:
            if len(chosen) < limit and perturbation not in cleared and fits(perturbation):
                chosen.setdefault(perturbation, origin)
        if len(chosen) >= limit:
            break
        cleared |= matched
    return list(chosen.items())


def _outcomes(report: dict) -> tuple[list[Perturbation], set[Perturbation]]:
    """A stored report's perturbed runs that failed or gave other files than the reference
    did, and those that matched it."""
    try:
        reference_group = report["runs"][0]["group"]
        runs = [(structs.convert(r["perturbation"], Perturbation),
                 r["status"] == RunStatus.OK and r["group"] == reference_group)
                for r in report["runs"] if r["index"] > 0]
    except (KeyError, IndexError, TypeError, ValueError):
        return [], set()  # a report from another buildfuzz teaches nothing: the schedule explores as usual
    return [p for p, same in runs if not same], {p for p, same in runs if same}


def _fits(perturbation: Perturbation, space: Space, varied: set[str]) -> bool:
    """Only what this campaign could run itself: its job range, its CPUs, the axes it varies
    (or a targeted hold, usable here); never the reference again."""
    lo, hi = space.jobs
    return (perturbation != reference(space) and lo <= perturbation.jobs <= hi
            and set(perturbation.cpus) <= set(space.cpus)
            and (space.vary_cpus or perturbation.cpus == space.cpus)
            and (space.vary_jitter or not perturbation.jitter)
            and all(_usable(name, varied) for name, _ in perturbation.variations))


def _usable(name: str, varied: set[str]) -> bool:
    """An axis the campaign varies, or one no schedule draws (a targeted hold) whose tool works here."""
    axis = axes.BY_NAME.get(name)
    return axis is not None and (name in varied or (axis.sample is None and axis.requires() is None))


def remember(subject: Subject, found: list[Identity], look: Look) -> Recollection:
    """The findings' statuses and known marks, and what the memory replayed; a campaign
    with a verdict records them in the store."""
    store = subject.store
    sighting = _sighting(subject.campaign, look, time.time())
    stored = store.findings(subject.source, subject.command)
    changed = updated(stored, found, sighting)
    rows = {**stored, **changed}
    listed = [rows[f.id] for f in found]
    listed += sorted((r for r in rows.values() if r.status == FIXED and r.status_campaign == subject.campaign),
                     key=lambda r: (r.kind, r.what))
    counted = _counts(look.tally, listed)
    if sighting.final:
        store.save_findings(subject.source, subject.command, list(changed.values()))
        store.save_counts(subject.source, subject.command, subject.campaign,
                          [(fid, c.seen, c.builds) for fid, c in counted.items()])
    pooled = store.pooled_counts(subject.source, subject.command)
    known = look.known | store.accepted(subject.source, subject.command)
    first = next(store.reports_before(subject.source, subject.command, subject.campaign), None) is None
    return Recollection([_finding(row, row.id in known, counted.get(row.id), pooled.get(row.id)) for row in listed],
                        _replayed_note(subject, look.replayed), first)


def _counts(tally: rates.Tally, listed: list[FindingRow]) -> dict[str, rates.Count]:
    """This campaign's count of each listed finding; one it found fixed counts 0 of its builds,
    so the pooled rate over nights falls after a fix."""
    counted = dict(tally.counts)
    for row in listed:
        builds = tally.builds.get(row.kind, 0)
        if row.id not in counted and row.status == FIXED and builds:
            counted[row.id] = rates.Count(0, builds)
    return counted


def updated(stored: dict[str, FindingRow], found: list[Identity], sighting: Sighting) -> dict[str, FindingRow]:
    """The rows a campaign's findings change: each found one seen again (or for the first
    time), each stored one it would have seen but did not, fixed."""
    changed = {identity.id: _seen(stored.get(identity.id), identity, sighting) for identity in found}
    for row in stored.values():
        if row.id not in changed and row.status != FIXED and _covers(sighting, row):
            changed[row.id] = replace(row, status=FIXED, status_campaign=sighting.campaign)
    return changed


def _seen(row: FindingRow | None, identity: Identity, sighting: Sighting) -> FindingRow:
    at, campaign = sighting.at, sighting.campaign
    if row is None:
        return FindingRow(identity.id, identity.kind, identity.what, sighting.scope, NEW, campaign,
                          campaign, at, campaign, at)
    if row.last_campaign > campaign:
        return row  # a later campaign spoke already: an earlier one concluded again changes nothing
    if row.status_campaign == campaign and row.status != FIXED:
        status = row.status  # this campaign concluded again (explain --relocalize): same answer
    else:
        status = NEW if row.status == FIXED else STILL  # back after a fix: a regression is news
    return replace(row, scope=sighting.scope, status=status, status_campaign=campaign,
                   last_campaign=campaign, last_seen=at)


def _covers(sighting: Sighting, row: FindingRow) -> bool:
    """Whether the campaign would have seen the finding, were it still there."""
    if row.last_campaign >= sighting.campaign or row.kind not in sighting.can_fix:
        return False
    return row.kind in (FAILURE, HAZARD) or row.scope == sighting.scope  # other files compared: no word on it


def _sighting(campaign: int, look: Look, now: float) -> Sighting:
    final = look.verdict in (Verdict.REPRODUCIBLE, Verdict.UNREPRODUCIBLE) and not look.resumable
    can_fix = {FAILURE, ARTIFACT, METADATA} if final else set()
    if final and (look.localized or look.verdict == Verdict.REPRODUCIBLE):  # nothing differs: no step makes it differ
        can_fix.add(CULPRIT)
    if final and look.localized:  # hazards come from traced builds only
        can_fix.add(HAZARD)
    return Sighting(campaign, now, look.scope, final, frozenset(can_fix))


def scope(artifacts: tuple[str, ...], ignore: tuple[str, ...], bookkeeping_discounted: bool) -> str:
    """Which files a campaign compared, as settings: a finding about another selection is out of its
    sight. Bookkeeping discounted is what `default_ignore` was before: the scope stays the same."""
    compared = [sorted(artifacts), sorted(ignore), bookkeeping_discounted]
    return hashlib.sha256(json.dumps(compared).encode()).hexdigest()[:12]


def _finding(row: FindingRow, known: bool, count: "rates.Count | None",
             pooled: tuple[int, int, int] | None) -> Finding:
    rate = structs.to_data(count.rate()) if count else {}
    total = {}
    if pooled and pooled[1] > 0:
        seen, builds, campaigns = pooled
        total = structs.to_data(rates.Count(seen, builds).rate(rates.pooled_text(seen, builds, campaigns),
                                                                campaigns=campaigns))
    return Finding(row.id, FindingKind(row.kind), row.what, FindingStatus(row.status), row.first_campaign,
                   _when(row.first_seen), row.last_campaign, _when(row.last_seen), known, rate, total)


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _replayed_note(subject: Subject, ran: int) -> list[str]:
    """`ran`: runs made of the remembered perturbations, right after the reference."""
    remembered = subject.store.remembered(subject.campaign)
    if ran <= 0:
        return []
    origins = list(dict.fromkeys(str(origin) for _, origin in remembered[:ran]))
    campaigns = f"campaign {origins[0]}" if len(origins) == 1 else f"campaigns {', '.join(origins)}"
    runs_replayed = "run 1" if ran == 1 else f"runs 1-{ran}"
    return [f"{runs_replayed} replayed what diverged or failed in {campaigns}, before the seeded schedule"]
