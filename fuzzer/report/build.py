"""Assemble the `Report` once, from plain facts: what the campaign was (`About`), its runs
and their digest labels, its comparison, the diffs made of it, its localization and what
the memory says of its findings. No I/O: the diffs are made before, by whoever kept the
files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from fuzzer import findings as finding_ids
from fuzzer import rates, replay_commands, structs
from fuzzer.compare import Comparison, DivergentArtifact
from fuzzer.execute.run import RunRecord
from fuzzer.model import (ArtifactFinding, Bookkeeping, Culprit, ExitReason, Finding, Hazard, InsideSummary,
                          MetadataStabilizer, Origin, PackageFile, Report, RunSummary, VariantSummary, Verdict)
from fuzzer.report.counts import basis
from fuzzer.report.cut_short import cut_short
from fuzzer.report.scope import scope

if TYPE_CHECKING:
    from fuzzer.explain import Localization


@dataclass(frozen=True)
class About:
    """What a report says of its campaign."""

    command: str
    source: str
    store: str  # for the replay command
    campaign: int
    seed: int
    verdict: Verdict
    exit_reason: ExitReason
    phases: dict[str, float]
    settings: dict  # each setting and where it came from
    notes: tuple[str, ...]  # what the campaign could not do
    parallel: int  # --parallel
    serial_fallback: str  # why --parallel ran one build at a time ("" when it did not)
    origin: Origin
    axes: tuple[str, ...]  # the axes asked for (--axes, --vary)
    unreached: dict[str, str] = field(default_factory=dict)  # axis → why its runs did not reach the whole build
    unread: tuple[str, ...] = ()  # those none of whose readers the hazard scan ran (shuffle: no make)


@dataclass(frozen=True)
class Label:
    """A run's digest of its compared files, and its digest group (None for a failed run)."""

    digest: str | None
    group: str | None


@dataclass(frozen=True)
class Diff:
    """A divergent artifact's diff between the first runs of two of its variants: the first
    and the first that differs from it in content (else the second)."""

    runs: tuple[int, int]
    text: str  # for the first few artifacts only: "" for the others
    files: tuple[str, ...] = ()  # diffoscope's reports (.html, .txt), files beside the stored report
    inside: InsideSummary | None = None  # what the comparators saw inside


@dataclass(frozen=True)
class Parts:
    """The parts of a report that carry findings, made before it: the memory reads them."""

    runs: list[RunSummary]
    artifacts: list[ArtifactFinding]
    culprits: list[Culprit]
    hazards: list[Hazard]

    def identities(self) -> list[finding_ids.Identity]:
        return finding_ids.identities_of(self.runs, self.artifacts, self.culprits, self.hazards)


def parts(records: list[RunRecord], labels: dict[int, Label], comparison: Comparison | None,
          diffs: dict[str, Diff], localization: "Localization | None",
          stabilized: dict[str, MetadataStabilizer]) -> Parts:
    """The runs' summaries (`labels`: each run's, by index), the divergent artifacts (with
    their diffs and what the metadata test found, by path) and the localization's culprits
    and hazards."""
    overlapping = overlaps(records)
    divergent = comparison.divergent if comparison else ()
    return Parts(
        runs=[_summary(r, labels[r.index], overlapping[r.index]) for r in records],
        artifacts=[_artifact(a, diffs.get(a.path), stabilized.get(a.path)) for a in divergent],
        culprits=list(localization.culprits) if localization else [],
        hazards=list(localization.hazards) if localization else [],
    )


def build_report(about: About, records: list[RunRecord], found: Parts, comparison: Comparison | None,
                 localization: "Localization | None", findings: list[Finding], last_notes: list[str],
                 packages: list[PackageFile], bookkeeping: Bookkeeping, first_in_store: bool = False) -> Report:
    """`comparison` is None when no run finished (the campaign was interrupted in run 0);
    `findings`: what the memory says of `found`; `last_notes`: the memory's, then the
    metadata test's; `packages`: the package files compared (`report.packages.package_files`);
    `bookkeeping`: the build systems' that differed (`report.bookkeeping.bookkeeping_files`);
    `first_in_store`: no earlier campaign of this source and command is in the store."""
    notes = list(about.notes) + _parallel_notes(about, found.runs) + _run_notes(records) \
        + (list(localization.notes) if localization else []) + last_notes
    report = Report(
        command=about.command,
        verdict=about.verdict,
        runs=found.runs,
        failed_runs=len(comparison.failed) if comparison else 0,
        divergent_artifacts=found.artifacts,
        culprits=found.culprits,
        hazards=found.hazards,
        reproduce=_reproduce(about, records, comparison) if comparison else "",
        source=about.source,
        seed=about.seed,
        campaign=about.campaign,
        artifacts_checked=comparison.checked if comparison else 0,
        notes=notes,
        exit_reason=about.exit_reason,
        phases=dict(about.phases),
        localized=localization is not None and localization.traced,
        minimal_reproducer=localization.minimal_reproducer if localization else None,
        settings=about.settings,
        packages=packages,
        bookkeeping=bookkeeping,
        findings=findings,
        first_in_store=first_in_store,
        audit=localization.audit if localization else None,
        unnamed=list(localization.unnamed) if localization else [],
        origin=about.origin,
        scope=scope(about.axes, [r.perturbation for r in records], about.unreached, about.unread),
        cut_short=cut_short(found.culprits, localization.audit, localization.unexplained_s, localization.budget_s,
                            max(localization.slots, localization.audit.parallel if localization.audit else 1))
        if localization else None,
    )
    return finding_ids.with_ids(msgspec.structs.replace(report, confidence=rates.verdict_confidence(report),
                                                        axis_bounds=rates.axis_bounds(report), basis=basis(report)))


def _summary(record: RunRecord, label: Label, overlapped_with: list[int]) -> RunSummary:
    return RunSummary(
        index=record.index,
        perturbation=structs.to_data(record.perturbation),
        status=record.status,
        exit_code=record.exit_code,
        wall_s=record.wall_s,
        digest=label.digest,
        group=label.group,
        log_tail=record.log_tail if not record.ok else "",
        log_path=record.log_path,
        jitter_events=len(record.jitter),
        overlapped_with=overlapped_with,
        reason=record.reason,
        host=record.host,
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


def _run_notes(records: list[RunRecord]) -> list[str]:
    """What an executor had to do besides running a build (a retry after a lost worker)."""
    return [f"run {record.index}: {record.note}" for record in records if record.note]


def _parallel_notes(about: About, runs: list[RunSummary]) -> list[str]:
    """What --parallel did: builds at once perturb each other, or it could not run them at once."""
    parallel = about.parallel
    if parallel == 1:
        return []
    if about.serial_fallback:
        return [about.serial_fallback]
    overlapped = sum(bool(run.overlapped_with) for run in runs)
    return [f"--parallel {parallel}: up to {parallel} builds ran at once, each in its own mount namespace at the "
            f"same path; concurrent builds perturb each other's timing (contention for CPUs, disk and caches: "
            f"jitter of its own), and {overlapped} of {len(runs)} runs overlapped another (see overlapped_with)"]


def _artifact(artifact: DivergentArtifact, diff: Diff | None, stabilizer: MetadataStabilizer | None
              ) -> ArtifactFinding:
    return ArtifactFinding(
        path=artifact.path,
        variants=len(artifact.variants),
        groups=[VariantSummary(v.label, v.identity, list(v.runs)) for v in artifact.variants],
        separated_by=[f.describe() for f in artifact.factors] or _too_few(artifact),
        axes=[f.axis for f in artifact.factors],
        same_conditions=artifact.same_conditions,
        diff=diff.text if diff else "",
        diff_runs=list(diff.runs) if diff and diff.text else [],
        diff_files=list(diff.files) if diff else [],
        inside=diff.inside if diff else None,
        metadata_stabilizer=stabilizer,
    )


def _too_few(artifact: DivergentArtifact) -> list[str]:
    if not artifact.too_few_runs:
        return []
    return [f"too few runs to separate: {', '.join(artifact.too_few_runs)} matched the variants, "
            "but some variant came from a single run"]


def _reproduce(about: About, records: list[RunRecord], comparison: Comparison) -> str:
    """A replay command for the first run that failed or diverged, or the failed reference;
    none when every build agreed."""
    telling = comparison.telling_runs() or ([] if records[0].ok else [0])
    if not telling:
        return ""
    return replay_commands.of_run(about.store, about.campaign, min(telling))
