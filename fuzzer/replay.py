"""Replay one stored run's exact perturbation; explain a stored campaign again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer.campaign import conclude, open_stored
from fuzzer.config import UsageError
from fuzzer.execute.local import LocalExecutor, RunOptions
from fuzzer.plan import Perturbation
from fuzzer.report.model import Report

SHOWN_PATHS = 10


@dataclass(frozen=True)
class ReplayResult:
    same: bool
    summary: str


def replay_run(store: Path, campaign_id: int | None, index: int | None, perturbation: Perturbation | None = None,
               trace: bool = False) -> ReplayResult:
    """Replay run `index` and compare with its recording, or run `perturbation` and
    compare with the reference (run 0)."""
    campaign = open_stored(store, campaign_id)
    try:
        if index is not None and not 0 <= index < len(campaign.runs):
            raise UsageError(f"campaign {campaign.id} has runs 0..{len(campaign.runs) - 1}, not {index}")
        recorded = campaign.runs[index if index is not None else 0]
        perturbation = perturbation or recorded.perturbation
        with LocalExecutor(campaign.spec) as executor:
            try:
                replayed = executor.run(index if index is not None else 9999, perturbation,
                                        RunOptions(trace=trace, label="-replay"))
            finally:
                campaign.spec.workspace.remove()
    finally:
        campaign.store.close()
    what = f"run {index}" if index is not None else "the reference"
    head = (f"{perturbation.describe()}: {what} was {recorded.status.value}, the replay {replayed.status.value}")
    if not (recorded.ok and replayed.ok):
        same = recorded.status == replayed.status
        return ReplayResult(same, f"{head}\nlog: {replayed.log_path}\n{replayed.log_tail}")
    differing = campaign.select(recorded.manifest).differing(campaign.select(replayed.manifest))
    if not differing:
        return ReplayResult(True, f"{head}\nsame digests as {what} ({len(replayed.manifest.entries)} files)")
    shown = "\n".join(f"  {p}" for p in differing[:SHOWN_PATHS])
    more = f"\n  ... and {len(differing) - SHOWN_PATHS} more" if len(differing) > SHOWN_PATHS else ""
    return ReplayResult(False, f"{head}\n{len(differing)} files differ from {what}:\n{shown}{more}")


def explain_campaign(store: Path, campaign_id: int | None) -> Report:
    campaign = open_stored(store, campaign_id)
    try:
        outcome = conclude(campaign)
    finally:
        campaign.store.close()
    return outcome.report
