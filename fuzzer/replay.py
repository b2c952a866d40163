"""Replay one stored run's exact perturbation; explain a stored campaign again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer.campaign import conclude, open_stored
from fuzzer.config import UsageError
from fuzzer.execute.local import LocalExecutor, RunOptions
from fuzzer.report.model import Report

SHOWN_PATHS = 10


@dataclass(frozen=True)
class ReplayResult:
    same: bool
    summary: str


def replay_run(store: Path, campaign_id: int | None, index: int, trace: bool = False) -> ReplayResult:
    campaign = open_stored(store, campaign_id)
    try:
        if not 0 <= index < len(campaign.runs):
            raise UsageError(f"campaign {campaign.id} has runs 0..{len(campaign.runs) - 1}, not {index}")
        recorded = campaign.runs[index]
        with LocalExecutor(campaign.spec) as executor:
            try:
                replayed = executor.run(index, recorded.perturbation, RunOptions(trace=trace, label="-replay"))
            finally:
                campaign.spec.workspace.remove()
    finally:
        campaign.store.close()
    head = f"run {index} ({recorded.perturbation.describe()}): recorded {recorded.status.value}, replay {replayed.status.value}"
    if not (recorded.ok and replayed.ok):
        same = recorded.status == replayed.status
        return ReplayResult(same, f"{head}\nlog: {replayed.log_path}\n{replayed.log_tail}")
    before, after = campaign.select(recorded.manifest), campaign.select(replayed.manifest)
    differing = before.differing(after)
    if not differing:
        return ReplayResult(True, f"{head}\nreproduced: the same digests as recorded ({len(after.entries)} files)")
    shown = "\n".join(f"  {p}" for p in differing[:SHOWN_PATHS])
    more = f"\n  ... and {len(differing) - SHOWN_PATHS} more" if len(differing) > SHOWN_PATHS else ""
    return ReplayResult(False, f"{head}\nnot reproduced: {len(differing)} files differ from the recording:\n{shown}{more}")


def explain_campaign(store: Path, campaign_id: int | None) -> Report:
    campaign = open_stored(store, campaign_id)
    try:
        outcome = conclude(campaign)
    finally:
        campaign.store.close()
    return outcome.report
