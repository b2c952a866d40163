"""The conclude phase: compare the stored runs, localize when they differ (or scan for
latent hazards when they agree), confirm the guided targets, write the report."""

from __future__ import annotations

import time
from dataclasses import replace

from fuzzer import explain, guided, replay_commands
from fuzzer.campaign import metadata_builds, reporting
from fuzzer.campaign.audit_phase import audit_steps, drop_kept_tree, with_audit
from fuzzer.campaign.state import SILENT, Campaign, Events, Outcome, with_own_executor
from fuzzer.compare import Comparison, compare
from fuzzer.config import MIN_SUCCESSFUL, shown
from fuzzer.errors import UsageError
from fuzzer.execute.logs import failed_targets
from fuzzer.execute.run import RunRecord
from fuzzer.explain.audit_run import AuditOutcome
from fuzzer.explain.budget import localization_budget
from fuzzer.model import ExitReason, Report, Verdict
from fuzzer.report import json_format


RESUME = "`buildfuzz run --resume` with the same options"


def conclude(campaign: Campaign, events: Events = SILENT) -> Outcome:
    """Compare the stored runs, localize when they differ, and write the report. A campaign
    with no verdict (interrupted, too few successful builds) is neither saved nor marked
    finished: `--resume` continues it; one whose builds Ctrl-C cut after some differed is
    saved with its verdict (the report says what was cut), and not marked finished either."""
    comparison = compare([_selected(campaign, r) for r in campaign.runs]) if campaign.runs else None
    _require_evidence(campaign, comparison)
    localization = None
    concluded = campaign.verdict(comparison) in (Verdict.REPRODUCIBLE, Verdict.UNREPRODUCIBLE)
    try:
        audited = audit_steps(campaign, events) if concluded else None
        if campaign.config.localize and concluded:
            localization = _localize(campaign, comparison, events, audited)
    finally:
        drop_kept_tree(campaign)
    localization = _confirm_targets(campaign, with_audit(localization, audited))
    diffs = campaign.evidence.diffs(campaign.runs, comparison, campaign.config.diff_timeout,
                                    time.monotonic() + campaign.seconds_left_for_diffs())
    tested = metadata_builds.test_metadata_stabilizer(campaign, diffs)
    report = reporting.report(campaign, comparison, localization, diffs, tested)
    if report.verdict != Verdict.INCONCLUSIVE:
        report = reporting.with_fixes(campaign, report)
        campaign.store.save_report(campaign.id, json_format.to_builtins(report))
    if report.verdict != Verdict.INCONCLUSIVE and not campaign.resumable:
        campaign.store.finish(campaign.id)  # a finished campaign is not resumed
        _drop_traces(campaign)
    return Outcome(report, report.exit_code, _why(campaign, report))


def _confirm_targets(campaign: Campaign, localization):
    """Targeted runs that diverged or failed confirm their hazard, with a replay command."""
    if localization is None or not campaign.targets:
        return localization
    after = campaign.control_index
    control = campaign.runs[after] if after is not None and len(campaign.runs) > after else None
    held = [guided.HeldRun(target, i, _differing_files(campaign, run), run.log_tail)
            for i, target in campaign.targets.items() if i < len(campaign.runs) and (run := campaign.runs[i])]
    matched = control is not None and not campaign.differs_from_reference(control)
    unheld = frozenset(path for i, run in enumerate(campaign.runs[1:], start=1) if i not in campaign.targets
                       for path in _shown_without_hold(campaign, run))
    store = str(campaign.config.store)
    hazards = guided.confirm(list(localization.hazards), held, matched, unheld,
                             lambda t: replay_commands.of_perturbation(store, campaign.id, t.perturbation))
    return replace(localization, hazards=tuple(hazards))


def _shown_without_hold(campaign: Campaign, record: RunRecord) -> list[str] | set[str]:
    """What a run without a hold showed: the files it differed in, or the targets it failed on."""
    differing = _differing_files(campaign, record)
    return failed_targets(record.log_tail) if differing is None else differing


def _differing_files(campaign: Campaign, record: RunRecord) -> list[str] | None:
    """Files of a run that differ from the reference's (None: the run failed)."""
    if not record.ok or record.manifest is None:
        return None
    return campaign.select_ignored(record.built).differing(campaign.select_ignored(campaign.runs[0].built))


def _require_evidence(campaign: Campaign, comparison: Comparison | None) -> None:
    """No green without a compared file: an empty tree, a wrong --source, a filter that
    matched nothing or a build that writes outside its tree must not pass CI."""
    if comparison is None or comparison.checked or campaign.verdict(comparison) != Verdict.REPRODUCIBLE:
        return
    left = len(campaign.runs[0].manifest.entries) if campaign.runs[0].manifest else 0
    if left:
        raise UsageError(f"no verdict: no file was compared: --artifact/--ignore (and the default ignores) "
                         f"left out all {left} files the reference build left")
    raise UsageError(f"no verdict: no file was compared: the build left no file in its tree (--source "
                     f"{shown(str(campaign.config.source))}); is --source right, or does the build write outside it?")


def _localize(campaign: Campaign, comparison: Comparison, events: Events,
              audited: AuditOutcome | None = None) -> explain.Localization | None:
    """Localize a divergence, or scan a reproducible build for latent hazards; `audited`: the
    step audit, whose budget localization spends with it, whose classified roots it takes
    over, and whose traced reference the hazard scan reads rather than trace it again."""
    def work(localizer):
        if comparison.reproducible:
            return explain.scan_hazards(campaign.builds(), localizer, audited.reference if audited else None)
        budget = audited.budget if audited else localization_budget(
            campaign.config.localize_budget_s, campaign.seconds_left(), campaign.runs[0].wall_s)
        builds = campaign.builds()  # tracing and shrinking stop inside the localization's budget too
        builds = replace(builds, deadline=min(builds.deadline, budget.deadline))
        return explain.localize(builds, comparison, localizer, budget, campaign.evidence, audited)

    return with_own_executor(campaign, "hazards" if comparison.reproducible else "localize", events, work)


def _why(campaign: Campaign, report: Report) -> str:
    """What the user needs to know beyond the report when there is no verdict."""
    if report.verdict == Verdict.REFERENCE_FAILED:
        reference = campaign.runs[0]
        tail = reference.log_tail or "(no output)"
        return f"the reference build failed (exit {reference.exit_code}); last lines:\n{tail}"
    if report.verdict == Verdict.UNREPRODUCIBLE and campaign.resumable:
        return f"interrupted after {len(campaign.runs)} runs, some of which differed: {RESUME} localizes"
    if report.verdict != Verdict.INCONCLUSIVE:
        return ""
    resume = f"{RESUME} continues this campaign"
    if campaign.exit_reason == ExitReason.INTERRUPTED or campaign.interrupted_in:
        return f"interrupted after {len(campaign.runs)} runs: no verdict; {resume}"
    succeeded = sum(r.ok for r in campaign.runs)
    return (f"no verdict: {succeeded} successful build(s), a verdict needs at least {MIN_SUCCESSFUL} "
            f"({campaign.exit_reason}); {resume}")


def _drop_traces(campaign: Campaign) -> None:
    """Traces (often the largest files of a campaign) served its localization, whose
    findings are in the report; `explain --relocalize` traces again."""
    for trace in campaign.spec.logs.glob("*.strace"):
        trace.unlink(missing_ok=True)


def _selected(campaign: Campaign, record: RunRecord) -> RunRecord:
    if record.manifest is None:
        return record
    return replace(record, manifest=campaign.select(record.manifest))
