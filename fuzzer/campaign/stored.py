"""A stored campaign's report: shown again without building, or made anew from its stored
runs (`buildfuzz explain [--relocalize]`); its findings accepted as known in the store
(`buildfuzz accept`) or written as a baseline file (`buildfuzz baseline`)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from fuzzer import findings
from fuzzer.campaign.conclude import conclude
from fuzzer.campaign.resume import open_stored
from fuzzer.campaign.state import Outcome
from fuzzer.errors import UsageError
from fuzzer.report import baseline, json_format
from fuzzer.findings import Identity
from fuzzer.store import Store


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
        report = json_format.from_builtins(data)
        return Outcome(report, report.exit_code)
    except msgspec.ValidationError as e:  # a key or value this buildfuzz does not know
        raise UsageError(f"the stored report of campaign {row.id} cannot be read ({e}); "
                         "`buildfuzz explain --relocalize` writes a new one") from None


def accept(store_path: Path, campaign_id: int | None) -> list[Identity]:
    """Mark a stored campaign's findings as known in the store: later runs fail only on new ones."""
    store = Store(store_path)
    try:
        row, report = _stored_report(store, campaign_id)
        found = findings.identities(report)
        store.accept(row.source, row.command, [(f.id, f.what) for f in found])
    finally:
        store.close()
    return found


def stored_baseline(store_path: Path, campaign_id: int | None) -> dict:
    """A baseline file's content: a stored campaign's findings."""
    store = Store(store_path)
    try:
        return baseline.baseline_file(_stored_report(store, campaign_id)[1])
    finally:
        store.close()


def _stored_report(store: Store, campaign_id: int | None):
    row = store.require_campaign(campaign_id)
    data = store.report(row.id)
    if data is None:
        raise UsageError(f"campaign {row.id} has no stored report (it has no verdict yet)")
    try:
        return row, json_format.from_builtins(data)
    except msgspec.ValidationError as e:
        raise UsageError(f"the stored report of campaign {row.id} cannot be read ({e})") from None
