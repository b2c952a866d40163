"""Replay one stored run's exact perturbation; show a stored campaign's report again."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fuzzer.campaign import Campaign, Outcome, conclude, open_stored
from fuzzer.config import UsageError
from fuzzer.execute.run import RunKind, RunRecord
from fuzzer.plan import Perturbation
from fuzzer.report.model import Report
from fuzzer.store import Store
from fuzzer.tools import strace

SHOWN_PATHS = 10


@dataclass(frozen=True)
class ReplayResult:
    reproduced: bool  # the replay failed or differs from the reference: exit 1 (design.md)
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


def explain_campaign(store: Path, campaign_id: int | None, relocalize: bool = False) -> Outcome:
    """The stored report, rendered again without building; `relocalize` compares the
    stored runs anew and localizes with traced builds (and stores the new report)."""
    if relocalize:
        campaign = open_stored(store, campaign_id)
        try:
            return conclude(campaign)
        finally:
            campaign.store.close()
    return stored_outcome(store, campaign_id)


def stored_outcome(store_path: Path, campaign_id: int | None) -> Outcome:
    """The stored report and the exit code the campaign ended with."""
    store = Store(store_path)  # no lock: reading a report never touches the workspace
    try:
        row = store.require_campaign(campaign_id)
        data = store.report(row.id)
        holder = store.holder() if data is None else None
    finally:
        store.close()
    if holder is not None:
        raise UsageError(f"campaign {row.id} has no report yet, and a buildfuzz (pid {holder}) is working on this "
                         "store: if that is the campaign, it stores its report when it ends")
    if data is None:
        raise UsageError(f"campaign {row.id} has no stored report: it never got to the end; "
                         f"`buildfuzz explain --relocalize` compares and localizes its stored runs, "
                         f"`buildfuzz run --resume` continues it")
    try:
        report = Report.from_json(data)
        return Outcome(report, report.exit_code)  # a verdict this buildfuzz does not know: KeyError
    except (TypeError, KeyError, ValueError) as e:
        raise UsageError(f"the stored report of campaign {row.id} cannot be read ({e}); "
                         "`buildfuzz explain --relocalize` writes a new one") from None
