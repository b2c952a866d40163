"""The campaign: plan → execute → observe → compare → explain → report, in named phases.

`run_campaign(config, events)` returns an `Outcome` and never prints; the CLI passes
an `Events` object that renders progress. Every run is stored the moment it ends, so
an interrupted campaign loses nothing and `--resume` continues it.
"""

from __future__ import annotations

import itertools
import shutil
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from fuzzer import explain
from fuzzer.compare import compare, variant_label
from fuzzer.config import FuzzConfig, UsageError, available_cpus, stored_config, validate
from fuzzer.execute.local import BuildSpec, LocalExecutor, RunRecord
from fuzzer.execute.workspace import Workspace
from fuzzer.explain.step_replay import SPREAD_S
from fuzzer.observe import DEFAULT_IGNORE, Manifest
from fuzzer.plan import Space, schedule
from fuzzer.report.build import build_report
from fuzzer.report.model import Report
from fuzzer.store import Store, StoreError

BLOB_LIMIT = 64 << 20  # variants larger than this are not kept for diffs
VARIANTS_KEPT = 3  # per path: enough to diff; an intrinsic build must not fill the disk overnight


class Events(Protocol):
    def started(self, campaign: int, seed: int, workspace: Path, resumed: int) -> None: ...
    def run_finished(self, record: RunRecord, group: str | None, planned: int) -> None: ...
    def phase(self, name: str) -> None: ...


class SilentEvents:
    def started(self, campaign, seed, workspace, resumed):
        pass

    def run_finished(self, record, group, planned):
        pass

    def phase(self, name):
        pass


SILENT = SilentEvents()


@dataclass
class Outcome:
    report: Report
    exit_code: int
    message: str = ""


@dataclass
class Campaign:
    """Everything one campaign's phases share."""

    config: FuzzConfig
    store: Store
    id: int
    seed: int
    spec: BuildSpec
    runs: list[RunRecord] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    exit_reason: str = ""
    groups: dict[str, str] = field(default_factory=dict)  # selected-manifest digest → label
    kept: dict[str, int] = field(default_factory=dict)  # path → variants kept as blobs
    started: float = field(default_factory=time.monotonic)

    def seconds_left(self) -> float:
        """Of the --budget, in this invocation (a resumed campaign gets a new budget)."""
        budget = self.config.budget_s
        return float("inf") if budget is None else budget - (time.monotonic() - self.started)

    @property
    def dir(self) -> Path:
        return self.store.campaign_dir(self.id)

    @property
    def reference_tree(self) -> Path:
        return self.dir / "reference"

    def select(self, manifest: Manifest) -> Manifest:
        return self.select_ignored(manifest).select(self.config.artifacts)

    def select_ignored(self, manifest: Manifest) -> Manifest:
        """Every file but the ignored ones: intermediates matter when walking upstream."""
        return manifest.select((), self.config.ignore + (DEFAULT_IGNORE if self.config.default_ignore else ()))

    def group_of(self, record: RunRecord) -> str | None:
        """The run's digest group label (A = the reference's), assigned in run order."""
        if not record.ok or record.manifest is None:
            return None
        digest = self.select(record.manifest).digest()
        return self.groups.setdefault(digest, variant_label(len(self.groups)))

    def differs_from_reference(self, record: RunRecord) -> bool:
        """A failed run, or one whose compared files differ from the reference's."""
        if not record.ok:
            return True
        return self.select(record.manifest).digest() != self.select(self.runs[0].manifest).digest()

    def diverged(self) -> bool:
        return len(self.groups) > 1 or (bool(self.runs) and self.runs[0].ok and not all(r.ok for r in self.runs))


def run_campaign(config: FuzzConfig, events: Events = SILENT) -> Outcome:
    config = validate(config)
    try:
        store = Store(config.store)
    except StoreError as e:
        raise UsageError(str(e)) from None
    try:
        campaign = _open(config, store)
        events.started(campaign.id, campaign.seed, campaign.spec.workspace.path, len(campaign.runs))
        with LocalExecutor(campaign.spec) as executor:
            return _phases(campaign, executor, events)
    finally:
        store.close()


def _phases(campaign: Campaign, executor: LocalExecutor, events: Events) -> Outcome:
    try:
        with _timed(campaign, "explore", events):
            _explore(campaign, executor, events)
    except KeyboardInterrupt:
        campaign.exit_reason = "interrupted"
    finally:
        executor.close()
        campaign.spec.workspace.remove()
    return conclude(campaign, events)


def conclude(campaign: Campaign, events: Events = SILENT) -> Outcome:
    """Compare the stored runs, localize when they differ, and write the report."""
    reference = campaign.runs[0] if campaign.runs else None
    if reference is None:
        raise UsageError("no reference build finished; nothing to report")
    if not reference.ok:
        report = build_report(campaign, compare(campaign.runs), None)
        tail = reference.log_tail or "(no output)"
        return Outcome(report, 3, f"the reference build failed (exit {reference.exit_code}); last lines:\n{tail}")
    comparison = compare([_selected(campaign, r) for r in campaign.runs])
    localization = None
    if campaign.config.localize and campaign.exit_reason != "interrupted":
        phase = "hazards" if comparison.reproducible else "localize"
        try:
            with _timed(campaign, phase, events), LocalExecutor(campaign.spec) as localizer:
                localization = (explain.scan_hazards(campaign, localizer) if comparison.reproducible
                                else explain.localize(campaign, comparison, localizer))
        except KeyboardInterrupt:
            campaign.exit_reason = "interrupted"
        finally:
            campaign.spec.workspace.remove()
    report = build_report(campaign, comparison, localization)
    campaign.store.save_report(campaign.id, report.to_json())
    if campaign.exit_reason != "interrupted":
        campaign.store.finish(campaign.id)  # a finished campaign is not resumed
    return Outcome(report, 0 if comparison.reproducible else 1)


def _explore(campaign: Campaign, executor: LocalExecutor, events: Events) -> None:
    config = campaign.config
    space = Space(
        jobs=config.jobs if "jobs" in config.axes else (config.jobs[0], config.jobs[0]),
        cpus=available_cpus(),
        vary_cpus="cpus" in config.axes,
        vary_jitter="jitter" in config.axes,
    )
    plan = itertools.islice(schedule(space, campaign.seed), config.runs)
    for index, perturbation in enumerate(plan):
        if index < len(campaign.runs):
            continue  # done before the campaign was resumed
        if index > 0 and not _within_budget(campaign):
            campaign.exit_reason = "budget spent"
            return
        record = executor.run(index, perturbation)
        campaign.runs.append(record)
        campaign.store.save_run(campaign.id, record)
        _keep_evidence(campaign, record)
        events.run_finished(record, campaign.group_of(record), config.runs)
        if index == 0 and not record.ok:
            campaign.exit_reason = "reference build failed"
            return
        if index == 0:
            _check_artifact_globs(campaign, record)
        if config.stop_on_first and campaign.diverged():
            campaign.exit_reason = "first divergence found"
            return
    campaign.exit_reason = campaign.exit_reason or "all runs done"


def _within_budget(campaign: Campaign) -> bool:
    """Start another run only if it is expected to end inside the budget, keeping room
    for what follows: a traced hazard scan (~1.5 builds), or once the builds diverged,
    localization (two traced builds, step replays; ablation runs only if time is left)."""
    walls = [r.wall_s for r in campaign.runs] or [0.0]
    typical = max(statistics.median(walls), walls[-1])
    # step replays are paced over SPREAD_S (twice: plain, then stabilisers) whatever the build's length
    localize = 4 * typical + 2 * SPREAD_S if campaign.diverged() else 1.5 * typical
    reserve = localize if campaign.config.localize else 0.0
    return typical * 1.2 + reserve <= campaign.seconds_left()


def _keep_evidence(campaign: Campaign, record: RunRecord) -> None:
    """Keep the reference tree, and every later variant of a differing file, for diffs."""
    workspace = campaign.spec.workspace
    if record.index == 0:
        if record.ok and not workspace.in_place and not campaign.reference_tree.exists():
            campaign.reference_tree.parent.mkdir(parents=True, exist_ok=True)
            workspace.path.rename(campaign.reference_tree)
        return
    reference = campaign.runs[0].manifest
    if not record.ok or record.manifest is None or reference is None:
        return
    blobs = campaign.dir / "blobs"
    for path, entry in record.manifest.entries.items():
        if entry.kind != "file" or entry.size > BLOB_LIMIT:
            continue
        ref_entry = reference.entries.get(path)
        if ref_entry is not None and ref_entry.identity() == entry.identity():
            continue
        blob = blobs / entry.digest
        if not blob.exists() and campaign.kept.get(path, 0) < VARIANTS_KEPT:
            blobs.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(workspace.path / path, blob)
            campaign.kept[path] = campaign.kept.get(path, 0) + 1


def _selected(campaign: Campaign, record: RunRecord) -> RunRecord:
    if record.manifest is None:
        return record
    return replace(record, manifest=campaign.select(record.manifest))


def _check_artifact_globs(campaign: Campaign, reference: RunRecord) -> None:
    entries = reference.manifest.entries if reference.manifest else {}
    for glob in campaign.config.artifacts:
        if not reference.manifest.select([glob]).entries:
            raise UsageError(f"--artifact {glob!r} matched no file the reference build left ({len(entries)} files)")


def open_stored(store_path: Path, campaign_id: int | None) -> Campaign:
    """A stored campaign, ready for replay or explain; the caller closes `campaign.store`."""
    try:
        store = Store(store_path)
    except StoreError as e:
        raise UsageError(str(e)) from None
    row = store.campaign(campaign_id)
    if row is None:
        store.close()
        which = f"campaign {campaign_id}" if campaign_id is not None else "any campaign"
        raise UsageError(f"store {store_path} holds no {which}")
    config = stored_config(row.source, row.command, row.seed, store_path, row.config)
    return _campaign(config, store, row.id, row.seed, store.runs(row.id))


def _open(config: FuzzConfig, store: Store) -> Campaign:
    source = config.source.resolve()
    previous = store.campaign() if config.resume else None
    if config.resume and (previous is None or previous.source != str(source) or previous.command != config.command):
        raise UsageError(f"--resume: no campaign for this source and command in {config.store}")
    if previous is not None and previous.finished is not None:
        previous = None  # it ran to its end: --resume starts the next campaign
    if previous is not None:
        cid, seed, runs = previous.id, previous.seed, store.runs(previous.id)
    else:
        cid, seed, runs = store.new_campaign(str(source), config.command, config.seed, config.to_json()), config.seed, []
    return _campaign(config, store, cid, seed, runs)


def _campaign(config: FuzzConfig, store: Store, cid: int, seed: int, runs: list[RunRecord]) -> Campaign:
    source = config.source.resolve()
    store_path = config.store.resolve()
    tree = source if config.in_place else store_path / "workspace" / (source.name or "tree")
    workspace = Workspace(source, tree, config.clean, frozenset({store_path}))
    spec = BuildSpec(config.command, workspace, store.campaign_dir(cid) / "logs", config.timeout)
    campaign = Campaign(config, store, cid, seed, spec, runs)
    for record in runs:
        campaign.group_of(record)
    return campaign


class _timed:
    def __init__(self, campaign: Campaign, name: str, events: Events):
        self.campaign, self.name, self.events = campaign, name, events

    def __enter__(self):
        self.events.phase(self.name)
        self.start = time.monotonic()

    def __exit__(self, *exc):
        self.campaign.phases[self.name] = round(time.monotonic() - self.start, 3)
