"""Replay one stored run's exact perturbation and compare it with the reference and the recording."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer import axes
from fuzzer.campaign import Campaign, open_stored
from fuzzer.config import UsageError
from fuzzer.execute.run import RunKind, RunRecord
from fuzzer.plan import Perturbation
from fuzzer.tools import strace

SHOWN_PATHS = 10


@dataclass(frozen=True)
class ReplayResult:
    reproduced: bool  # the replay failed or differs from the reference: exit 1
    summary: str


def replay_run(store: Path, campaign_id: int | None, index: int | None, perturbation: Perturbation | None = None,
               trace: bool = False) -> ReplayResult:
    """Replay run `index` (or run `perturbation`) and compare with the reference (run 0),
    and with run `index`'s recording. Either form reproduced the divergence when the
    replay failed or differs from the reference."""
    if trace:
        strace.STRACE.require()  # before the workspace is copied
    campaign = open_stored(store, campaign_id)
    try:
        if index is not None and not 0 <= index < len(campaign.runs):
            raise UsageError(f"campaign {campaign.id} has runs 0..{len(campaign.runs) - 1}, not {index}")
        perturbation = perturbation or campaign.runs[index].perturbation
        axes.require_usable(perturbation)  # a variation applied nowhere would "not reproduce" anything
        executor = campaign.executor_factory(campaign.spec)
        try:
            replayed = executor.run(campaign.request(RunKind.REPLAY, perturbation, trace=trace))
        finally:
            executor.close()
            campaign.spec.workspace.remove()
    finally:
        campaign.store.close()
    return _judged(campaign, index, replayed)


def _judged(campaign: Campaign, index: int | None, replayed: RunRecord) -> ReplayResult:
    same_as_reference, against_reference = _compared(campaign, replayed, campaign.runs[0], "the reference")
    lines = [f"{replayed.perturbation.describe()}: the replay {replayed.status.value}"]
    if index:  # run 0 is the reference itself
        lines.append(_compared(campaign, replayed, campaign.runs[index], f"run {index}")[1])
    lines.append(against_reference)
    if not replayed.ok:
        lines.append(f"log: {replayed.log_path}\n{replayed.log_tail}")
    reproduced = not (replayed.ok and same_as_reference)
    lines.append("reproduced: the build failed or differs from the reference" if reproduced
                 else "not reproduced: the build matched the reference")
    return ReplayResult(reproduced, "\n".join(lines))


def _compared(campaign: Campaign, replayed: RunRecord, recorded: RunRecord, name: str) -> tuple[bool, str]:
    """Whether the replay gave what `recorded` gave (its status; its compared files when
    both succeeded), and a line saying so."""
    if not (recorded.ok and replayed.ok):
        same = recorded.status == replayed.status
        return same, f"{name} was {recorded.status.value}: {'the same' if same else 'a different'} outcome"
    differing = campaign.select(recorded.manifest).differing(campaign.select(replayed.manifest))
    if not differing:
        return True, f"same digests as {name} ({len(campaign.select(replayed.manifest).entries)} files compared)"
    shown = "".join(f"\n  {p}" for p in differing[:SHOWN_PATHS])
    more = f"\n  ... and {len(differing) - SHOWN_PATHS} more" if len(differing) > SHOWN_PATHS else ""
    files = f"{len(differing)} files differ" if len(differing) > 1 else "1 file differs"
    return False, f"{files} from {name}:{shown}{more}"
