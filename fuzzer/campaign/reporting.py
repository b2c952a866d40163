"""The campaign's report: its facts handed to the report stage as plain data (with the
diffs made from the kept evidence and the metadata test's builds, both before), the
memory's word on the findings, then one assembly; then each finding's fix, suggested
without rebuilding."""

from __future__ import annotations

import socket
import time
from datetime import datetime, timezone

from fuzzer import __version__, memory, rates
from fuzzer.campaign.audit_phase import audited_verdict
from fuzzer.campaign.state import Campaign
from fuzzer.compare import Comparison
from fuzzer.execute.choose import serial_fallback
from fuzzer.execute.run import RunRecord
from fuzzer.explain import Localization
from fuzzer.explain.artifact_metadata import Tested
from fuzzer.fix import suggest
from fuzzer.model import Origin, PackageFile, Reason, Report, Verdict
from fuzzer.observe import Manifest
from fuzzer.report.build import About, Diff, Label, build_report, parts
from fuzzer.report.bookkeeping import bookkeeping_files
from fuzzer.report.packages import package_files


def report(campaign: Campaign, comparison: Comparison | None, localization: Localization | None,
           diffs: dict[str, Diff], tested: Tested) -> Report:
    """`diffs`: the divergent artifacts' (`Evidence.diffs`), by path; `tested`: the metadata
    test's stabilisers (`explain.artifact_metadata`)."""
    config = campaign.config
    labels = {r.index: _label(campaign, r) for r in campaign.runs}
    found = parts(campaign.runs, labels, comparison, diffs, localization, tested.found)
    verdict = audited_verdict(campaign.verdict(comparison), localization)
    look = memory.Look(verdict, localization is not None and localization.traced,
                       memory.scope(config.artifacts, config.ignore, not config.count_bookkeeping), config.known,
                       sum(r.reason == Reason.REMEMBERED.value for r in campaign.runs),
                       rates.tally(found.runs, found.artifacts, found.culprits, found.hazards,
                                   frozenset(path for m in _compared(campaign)[:1] for path in m.entries)),
                       campaign.resumable)
    recalled = memory.remember(campaign.subject(), found.identities(), look)
    return build_report(_about(campaign, verdict), campaign.runs, found, comparison, localization,
                        recalled.findings, recalled.notes + list(tested.notes), _packages(campaign),
                        bookkeeping_files(_compared(campaign), config.count_bookkeeping), recalled.first)


def with_fixes(campaign: Campaign, report: Report) -> Report:
    """Each culprit's and hazard's fix, not proven (`buildfuzz fix` proves it): its patch
    where `buildfuzz fix` writes it, in the store, or the remedy in words."""
    if not report.culprits and not report.hazards:
        return report
    out = campaign.store.campaign_dir(campaign.id) / "fixes"
    with suggest.source_tree(campaign.spec.workspace, report.command) as tree:
        fixed = suggest.suggest([*report.hazards, *report.culprits], report.hazards, tree, out)
    return suggest.with_fixes(report, fixed)


def _packages(campaign: Campaign) -> list[PackageFile]:
    built = [r for r in campaign.runs if r.ok and r.manifest is not None]
    compared = campaign.selection.compared
    reference = compared(campaign.runs[0].built) if built and built[0].index == 0 else None
    return package_files(reference, _compared(campaign), campaign.config.source, campaign.evidence.expected_of)


def _compared(campaign: Campaign) -> list[Manifest]:
    """The successful runs' compared files as built: the report says what was set aside."""
    compared = campaign.selection.compared
    return [compared(r.manifest) for r in campaign.runs if r.ok and r.manifest is not None]


def _label(campaign: Campaign, record: RunRecord) -> Label:
    digest = campaign.select(record.manifest).digest() if record.ok and record.manifest else None
    return Label(digest, campaign.group_of(record))


def _about(campaign: Campaign, verdict: Verdict) -> About:
    config = campaign.config
    return About(
        command=config.command,
        source=str(config.source),
        store=str(config.store),
        campaign=campaign.id,
        seed=campaign.seed,
        verdict=verdict,
        exit_reason=campaign.exit_reason,
        phases=dict(campaign.phases),
        settings=campaign.settings,
        notes=tuple(campaign.notes),
        parallel=config.parallel,
        serial_fallback=serial_fallback(config) if config.parallel != 1 else "",
        origin=_origin(campaign),
        axes=config.axes,
        unreached=dict(campaign.unreached),
        unread=campaign.unread,
    )


def _origin(campaign: Campaign) -> Origin:
    row = campaign.store.campaign(campaign.id)
    return Origin(buildfuzz=__version__, host=socket.gethostname(), started=_utc(row.created if row else time.time()),
                  ended=_utc(time.time()))


def _utc(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")
