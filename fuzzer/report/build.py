"""Assemble the `Report` from a campaign's runs, its comparison and its localization."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from fuzzer.compare import Comparison, DivergentArtifact
from fuzzer.compare.diff import diff_files
from fuzzer.execute.choose import serial_fallback
from fuzzer.execute.run import RunRecord
from fuzzer.report.model import ArtifactFinding, Report, RunSummary, VariantSummary
from fuzzer.report.packages import package_files
from fuzzer.tools import diffoscope

if TYPE_CHECKING:
    from fuzzer.campaign import Campaign
    from fuzzer.explain import Localization

DIFFED_ARTIFACTS = 5  # diffs are for reading; the first few divergent artifacts suffice
HTML_DIFF_LIMIT = 4 << 20  # a larger diffoscope page would swamp the report


def build_report(campaign: "Campaign", comparison: Comparison | None, localization: "Localization | None") -> Report:
    """`comparison` is None when no run finished (the campaign was interrupted in run 0)."""
    overlapping = overlaps(campaign.runs)
    runs = [_summary(campaign, r, overlapping[r.index]) for r in campaign.runs]
    divergent = comparison.divergent if comparison else ()
    artifacts = [_artifact(campaign, a, with_diff=i < DIFFED_ARTIFACTS) for i, a in enumerate(divergent)]
    notes = campaign.notes + _parallel_notes(campaign, runs) + _run_notes(campaign) \
        + (list(localization.notes) if localization else [])
    return Report(
        command=campaign.config.command,
        verdict=campaign.verdict(comparison),
        runs=runs,
        failed_runs=len(comparison.failed) if comparison else 0,
        divergent_artifacts=artifacts,
        culprits=list(localization.culprits) if localization else [],
        hazards=list(localization.hazards) if localization else [],
        reproduce=_reproduce(campaign, comparison) if comparison else "",
        source=str(campaign.config.source),
        seed=campaign.seed,
        campaign=campaign.id,
        artifacts_checked=comparison.checked if comparison else 0,
        notes=notes,
        exit_reason=campaign.exit_reason,
        phases=dict(campaign.phases),
        localized=localization is not None and localization.traced,
        minimal_reproducer=localization.minimal_reproducer if localization else None,
        settings=campaign.settings,
        packages=package_files(campaign),
    )


def _summary(campaign: "Campaign", record, overlapped_with: list[int]) -> RunSummary:
    return RunSummary(
        index=record.index,
        perturbation=record.perturbation.to_json(),
        status=record.status.value,
        exit_code=record.exit_code,
        wall_s=record.wall_s,
        digest=campaign.select(record.manifest).digest() if record.ok and record.manifest else None,
        group=campaign.group_of(record),
        log_tail=record.log_tail if not record.ok else "",
        log_path=record.log_path,
        jitter_events=len(record.jitter),
        overlapped_with=overlapped_with,
        reason=record.reason,
    )


def overlaps(records: list[RunRecord]) -> dict[int, list[int]]:
    """Run index → the runs that were building at the same time on the same host. Runs
    loaded from a store have no start time (a resumed campaign's earlier runs): none."""
    found: dict[int, list[int]] = {r.index: [] for r in records}
    spans = sorted((r for r in records if r.started_at > 0), key=lambda r: r.started_at)
    for i, first in enumerate(spans):
        for later in spans[i + 1:]:
            if later.started_at >= first.started_at + first.wall_s:
                break
            if later.host == first.host:
                found[first.index].append(later.index)
                found[later.index].append(first.index)
    return {index: sorted(others) for index, others in found.items()}


def _run_notes(campaign: "Campaign") -> list[str]:
    """What an executor had to do besides running a build (a retry after a lost worker)."""
    return [f"run {record.index}: {record.note}" for record in campaign.runs if record.note]


def _parallel_notes(campaign: "Campaign", runs: list[RunSummary]) -> list[str]:
    """What --parallel did: builds at once perturb each other, or it could not run them at once."""
    parallel = campaign.config.parallel
    if parallel == 1:
        return []
    fallback = serial_fallback(campaign.config)
    if fallback:
        return [fallback]
    overlapped = sum(bool(run.overlapped_with) for run in runs)
    return [f"--parallel {parallel}: up to {parallel} builds ran at once, each in its own mount namespace at the "
            f"same path; concurrent builds perturb each other's timing (contention for CPUs, disk and caches: "
            f"jitter of its own), and {overlapped} of {len(runs)} runs overlapped another (see overlapped_with)"]


def _artifact(campaign: "Campaign", artifact: DivergentArtifact, with_diff: bool) -> ArtifactFinding:
    diff, diff_html, pair = "", "", []
    if with_diff:
        pair = [artifact.variants[0].runs[0], artifact.variants[1].runs[0]]
        files = [campaign.evidence.variant_file(campaign.runs[index], artifact.path) for index in pair]
        diff = _diff(campaign, artifact.path, pair, files)
        if None not in files:
            diff_html = diffoscope.report(str(files[0]), str(files[1]), "html", campaign.config.diff_timeout) or ""
    return ArtifactFinding(
        path=artifact.path,
        variants=len(artifact.variants),
        groups=[VariantSummary(v.label, v.identity, list(v.runs)) for v in artifact.variants],
        separated_by=[f.describe() for f in artifact.factors] or _too_few(artifact),
        axes=[f.axis for f in artifact.factors],
        same_conditions=artifact.same_conditions,
        diff=diff,
        diff_runs=pair,
        diff_html=diff_html if len(diff_html) <= HTML_DIFF_LIMIT else "",
    )


def _too_few(artifact: DivergentArtifact) -> list[str]:
    if not artifact.too_few_runs:
        return []
    return [f"too few runs to separate: {', '.join(artifact.too_few_runs)} matched the variants, "
            "but some variant came from a single run"]


def _diff(campaign: "Campaign", path: str, pair: list[int], files: list[Path | None]) -> str:
    if None in files:
        missing = [str(i) for i, f in zip(pair, files) if f is None]
        return f"(no diff: {path} is absent or not kept in run {', '.join(missing)})"
    labels = (f"run {pair[0]}/{path}", f"run {pair[1]}/{path}")
    return diff_files(str(files[0]), str(files[1]), labels=labels, timeout=campaign.config.diff_timeout)


def _reproduce(campaign: "Campaign", comparison: Comparison) -> str:
    """A replay command for the first run that failed or diverged, or the failed reference;
    none when every build agreed."""
    telling = comparison.telling_runs() or ([] if campaign.runs[0].ok else [0])
    if not telling:
        return ""
    words = ["buildfuzz", "replay", "--store", str(campaign.config.store), "--campaign", str(campaign.id),
             "--run", str(min(telling))]
    return shlex.join(words)
