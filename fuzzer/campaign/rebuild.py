"""A stored campaign built again: one run replayed (`buildfuzz replay`), or its findings'
patches proven by rebuilds (`buildfuzz fix`). The campaign opens the store, numbers the
builds and makes them; `fuzzer.replay` and `fuzzer.fix` judge them from plain facts."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from fuzzer import axes, replay
from fuzzer.campaign.resume import open_stored
from fuzzer.campaign.state import Campaign
from fuzzer.errors import UsageError
from fuzzer.execute.run import RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.fix import fixes, suggest
from fuzzer.fix.proof import AFTER, BEFORE, Build, Proving
from fuzzer.model import RunKind
from fuzzer.plan import Perturbation
from fuzzer.report import json_format
from fuzzer.tools import strace, unshare


def replay_run(store: Path, campaign_id: int | None, index: int | None, perturbation: Perturbation | None = None,
               trace: bool = False) -> replay.ReplayResult:
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
        with _builds(campaign, campaign.spec.workspace, trace) as build:
            replayed = build(perturbation)
    finally:
        campaign.store.close()
    return replay.judged(campaign.selection, tuple(campaign.runs), index, replayed)


def fix_campaign(store: Path, campaign_id: int | None, wanted: tuple[str, ...], report_json: Path | None,
                 before: int = BEFORE, after: int = AFTER) -> list[suggest.Fixed]:
    """`buildfuzz fix`: the stored report's findings fixed, the report stored (and written to
    `report_json`) with each one's patch and what became of it."""
    campaign = open_stored(store, campaign_id)
    try:
        data = campaign.store.report(campaign.id)
        if data is None:
            raise UsageError(f"campaign {campaign.id} has no stored report: nothing to fix")
        report = json_format.from_builtins(data)
        out = report_json.with_name(report_json.name + ".fixes") if report_json else \
            campaign.store.campaign_dir(campaign.id) / "fixes"
        proving = Proving(campaign.runs[0], campaign.selection, campaign.spec.workspace,
                          functools.partial(_builds, campaign), _unbindable(campaign))
        groups = {r.index: campaign.group_of(r) for r in campaign.runs}
        fixed = fixes.fix_findings(report, wanted, tuple(campaign.runs), groups, proving, out, before, after)
        updated = suggest.with_fixes(report, fixed)
        campaign.store.save_report(campaign.id, json_format.to_builtins(updated))
        if report_json is not None:
            report_json.write_text(json_format.render(updated), encoding="utf-8")
    finally:
        campaign.spec.workspace.remove()
        campaign.store.close()
    return fixed


def _unbindable(campaign: Campaign) -> str:
    """Why the campaign's builds cannot see a copy of its tree at the tree's own path ("" when
    they can: this machine, with mount namespaces)."""
    if campaign.config.dask is not None:
        return "builds on a Dask cluster's workers have no mount namespace of this tree"
    problem = unshare.UNSHARE.problem()
    return f"no mount namespace here ({problem})" if problem else ""


@contextlib.contextmanager
def _builds(campaign: Campaign, workspace: Workspace, trace: bool = False) -> Iterator[Build]:
    """Builds of `workspace`'s source at the campaign's path, numbered as replays; the tree
    is removed after."""
    executor = campaign.executor_factory(replace(campaign.spec, workspace=workspace))

    def build(perturbation: Perturbation) -> RunRecord:
        record = executor.run(campaign.request(RunKind.REPLAY, perturbation, trace=trace))
        campaign.evidence.keep_records(executor, record)  # judged settled as the campaign's runs were
        return record
    try:
        yield build
    finally:
        executor.close()
        workspace.remove()
