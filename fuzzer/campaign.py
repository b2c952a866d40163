"""The campaign: plan → execute → observe → compare → explain → report, in named phases.

`run_campaign(config, events)` returns an `Outcome` and never prints; the CLI passes
an `Events` object that renders progress. Every run is stored the moment it ends, so
an interrupted campaign loses nothing and `--resume` continues it.
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Protocol

from fuzzer import axes, explain, guided, memory
from fuzzer.compare import Comparison, compare, variant_label
from fuzzer.config import MIN_SUCCESSFUL, FuzzConfig, UsageError, available_cpus, shown, stored_config, validate
from fuzzer.execute import choose
from fuzzer.execute.executor import Executor
from fuzzer.execute.local import BuildSpec, LocalExecutor, default_timeout
from fuzzer.execute.run import RunKind, RunRecord, RunRequest
from fuzzer.explain.ablation import replay_command
from fuzzer.execute.workspace import Workspace
from fuzzer.execute import hold
from fuzzer.execute.step_replay import SPREAD_S
from fuzzer.explain.traced import TRACE_SLOWDOWN
from fuzzer.observe import DEFAULT_IGNORE, Manifest
from fuzzer.plan import Space, format_cpus
from fuzzer.report.build import build_report, verdict
from fuzzer.report.model import INCONCLUSIVE, REFERENCE_FAILED, REPRODUCIBLE, UNREPRODUCIBLE, Report
from fuzzer.store import CampaignRow, Store
from fuzzer.tools import strace
from fuzzer.trace.steps import load_trace

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
ExecutorFactory = Callable[[BuildSpec], Executor]  # the local executor unless told otherwise


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
    digests: dict[int, str] = field(default_factory=dict)  # run index → selected-manifest digest
    kept: dict[str, int] = field(default_factory=dict)  # path → variants kept as blobs
    started: float = field(default_factory=lambda: time.monotonic())
    executor_factory: ExecutorFactory = LocalExecutor
    counters: dict[RunKind, int] = field(default_factory=dict)  # runs made so far of each localization kind
    notes: list[str] = field(default_factory=list)  # for the report: what this campaign could not do
    localize_deadline: float | None = None  # while localizing: when its budget ends (time.monotonic())
    targets: dict = field(default_factory=dict)  # run index → the guided.Target it ran
    control_index: int | None = None  # the run with the targets' settings and no hold
    settings: dict = field(default_factory=dict)  # for the report: each setting and where it came from

    def request(self, kind: RunKind, perturbation, trace: bool = False) -> RunRequest:
        """A localization run (numbered within its kind), under the campaign's timeout."""
        index = self.counters.get(kind, 0)
        self.counters[kind] = index + 1
        return RunRequest(index, perturbation, kind, trace=trace, timeout=self.timeout_after_reference())

    def timeout_after_reference(self) -> float | None:
        """--timeout, or a default derived from the reference build once it ran."""
        if not self.runs:
            return self.config.timeout
        return default_timeout(self.config.timeout, self.runs[0].wall_s)

    def seconds_left(self) -> float:
        """Of the --budget, in this invocation (a resumed campaign gets a new budget), and of
        the localization budget while localizing."""
        budget = self.config.budget_s
        left = float("inf") if budget is None else budget - (time.monotonic() - self.started)
        return left if self.localize_deadline is None else min(left, self.localize_deadline - time.monotonic())

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
        """The run's digest group label: A is the reference's, then B, C... in order of
        first appearance by run index, whatever order the runs finished in."""
        if not record.ok or record.manifest is None:
            return None
        return self.groups.get(self._digest(record))

    def add_run(self, record: RunRecord) -> None:
        """Keep `runs` in index order (parallel runs end in any order), and the labels with them."""
        self.runs.append(record)
        self.runs.sort(key=lambda r: r.index)
        order = [self._digest(r) for r in self.runs if r.ok and r.manifest is not None]
        self.groups = {digest: variant_label(i) for i, digest in enumerate(dict.fromkeys(order))}

    def _digest(self, record: RunRecord) -> str:
        if record.index not in self.digests:
            self.digests[record.index] = self.select(record.manifest).digest()
        return self.digests[record.index]

    def differs_from_reference(self, record: RunRecord) -> bool:
        """A failed run, or one whose compared files differ from the reference's."""
        if not record.ok:
            return True
        return self.select(record.manifest).digest() != self.select(self.runs[0].manifest).digest()

    def diverged(self) -> bool:
        return len(self.groups) > 1 or (bool(self.runs) and self.runs[0].ok and not all(r.ok for r in self.runs))


def run_campaign(config: FuzzConfig, events: Events = SILENT, executor_factory: ExecutorFactory | None = None,
                 settings: dict | None = None) -> Outcome:
    """`executor_factory`: where builds run (tests pass a fake); by default from the config.
    `settings`: each setting and where it came from, for the report (the stored one too)."""
    config = validate(config)
    executor_factory = executor_factory or choose.executor_factory(config)
    # held until the report is written: a second campaign on this store would build in the same workspace
    store = Store(config.store, create=True, exclusive=True)
    try:
        campaign = _open(config, store)
        campaign.executor_factory = executor_factory
        campaign.settings = settings or {}
        try:
            events.started(campaign.id, campaign.seed, campaign.spec.workspace.path, len(campaign.runs))
            executor = executor_factory(campaign.spec)
            return _phases(campaign, executor, events)
        finally:
            store.drop_if_empty(campaign.id)
    finally:
        store.close()


def _phases(campaign: Campaign, executor: Executor, events: Events) -> Outcome:
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
    """Compare the stored runs, localize when they differ, and write the report. A campaign
    with no verdict (interrupted, too few successful builds) is neither saved nor marked
    finished: `--resume` continues it."""
    comparison = compare([_selected(campaign, r) for r in campaign.runs]) if campaign.runs else None
    _require_evidence(campaign, comparison)
    localization = None
    if campaign.config.localize and verdict(campaign, comparison) in (REPRODUCIBLE, UNREPRODUCIBLE):
        localization = _localize(campaign, comparison, events)
    localization = _confirm_targets(campaign, localization)
    report = memory.remember(campaign, build_report(campaign, comparison, localization))
    if report.verdict != INCONCLUSIVE:
        campaign.store.save_report(campaign.id, report.to_json())
        campaign.store.finish(campaign.id)  # a finished campaign is not resumed
        _drop_traces(campaign)
    return Outcome(report, report.exit_code, _why(campaign, report))


def _confirm_targets(campaign: Campaign, localization):
    """Targeted runs that diverged or failed confirm their hazard, with a replay command."""
    if localization is None or not campaign.targets:
        return localization
    after = campaign.control_index
    control = campaign.runs[after] if after is not None and len(campaign.runs) > after else None
    if control is None or campaign.differs_from_reference(control):
        return localization  # the build differs without any hold: a held run's difference proves nothing
    ran = [(t, i, guided.manifested(t, _differing_files(campaign, run), run.log_tail))
           for i, t in campaign.targets.items() if i < len(campaign.runs) and (run := campaign.runs[i])]
    hazards = guided.confirmed(ran, list(localization.hazards), lambda t: replay_command(campaign, t.perturbation))
    return replace(localization, hazards=tuple(hazards))


def _differing_files(campaign: Campaign, record: RunRecord) -> list[str] | None:
    """Files of a run that differ from the reference's (None: the run failed)."""
    if not record.ok or record.manifest is None:
        return None
    return campaign.select_ignored(record.manifest).differing(campaign.select_ignored(campaign.runs[0].manifest))


def _require_evidence(campaign: Campaign, comparison: Comparison | None) -> None:
    """No green without a compared file: an empty tree, a wrong --source, a filter that
    matched nothing or a build that writes outside its tree must not pass CI."""
    if comparison is None or comparison.checked or verdict(campaign, comparison) != REPRODUCIBLE:
        return
    left = len(campaign.runs[0].manifest.entries) if campaign.runs[0].manifest else 0
    if left:
        raise UsageError(f"no verdict: no file was compared: --artifact/--ignore (and the default ignores) "
                         f"left out all {left} files the reference build left")
    raise UsageError(f"no verdict: no file was compared: the build left no file in its tree (--source "
                     f"{shown(str(campaign.config.source))}); is --source right, or does the build write outside it?")


def _localize(campaign: Campaign, comparison: Comparison, events: Events) -> explain.Localization | None:
    """Localize a divergence, or scan a reproducible build for latent hazards."""
    phase = "hazards" if comparison.reproducible else "localize"
    try:
        with _timed(campaign, phase, events):
            localizer = campaign.executor_factory(campaign.spec)
            try:
                if comparison.reproducible:
                    return explain.scan_hazards(campaign, localizer)
                return explain.localize(campaign, comparison, localizer)
            finally:
                localizer.close()
    except KeyboardInterrupt:
        campaign.exit_reason = "interrupted"
        return None
    finally:
        campaign.spec.workspace.remove()


def _why(campaign: Campaign, report: Report) -> str:
    """What the user needs to know beyond the report when there is no verdict."""
    if report.verdict == REFERENCE_FAILED:
        reference = campaign.runs[0]
        tail = reference.log_tail or "(no output)"
        return f"the reference build failed (exit {reference.exit_code}); last lines:\n{tail}"
    if report.verdict != INCONCLUSIVE:
        return ""
    resume = "`buildfuzz run --resume` with the same options continues this campaign"
    if campaign.exit_reason == "interrupted":
        return f"interrupted after {len(campaign.runs)} runs: no verdict; {resume}"
    succeeded = sum(r.ok for r in campaign.runs)
    return (f"no verdict: {succeeded} successful build(s), a verdict needs at least {MIN_SUCCESSFUL} "
            f"({campaign.exit_reason}); {resume}")


def _explore(campaign: Campaign, executor: Executor, events: Events) -> None:
    """The reference first, alone (every later run is compared with it and timed by it),
    then the schedule, `executor.slots` builds at a time, each stored as it ends."""
    config = campaign.config
    campaign.notes += axes.unavailable(config.axes)  # said once, in the report
    varied = axes.variation_axes(config.axes)
    plan = list(itertools.islice(axes.schedule(_space(config), campaign.seed, varied), config.runs))
    plan = memory.remembered_first(campaign, plan, _space(config), varied)  # what diverged before, first
    if not campaign.runs:
        reference = executor.run(RunRequest(0, plan[0], timeout=config.timeout))
        if not _finish_run(campaign, executor, events, reference):
            return
    if _guided(campaign) and len(plan) > 1:
        if len(campaign.runs) == 1:  # the first run after the reference is traced, alone
            if not _within_budget(campaign, slowdown=TRACE_SLOWDOWN):
                campaign.exit_reason = "budget spent"
                return
            traced = executor.run(RunRequest(1, plan[1], timeout=campaign.timeout_after_reference(), trace=True))
            if not _finish_run(campaign, executor, events, traced):
                return
        plan = _with_targets(campaign, plan)
    pending: dict = {}
    upcoming = iter(range(len(campaign.runs), len(plan)))
    stop = ""
    while True:
        while not stop and len(pending) < executor.slots:
            index = next(upcoming, None)
            stop = _stop_before(campaign, index)
            if not stop:
                request = RunRequest(index, plan[index], timeout=campaign.timeout_after_reference())
                pending[executor.submit(request)] = request
        if not pending:
            break
        done = next(iter(executor.as_completed(pending)))
        del pending[done]
        if not _finish_run(campaign, executor, events, done.result()):
            stop = stop or campaign.exit_reason
    campaign.exit_reason = campaign.exit_reason or (stop if stop != "done" else "all runs done")


def _guided(campaign: Campaign) -> bool:
    """Targeted runs need the hold axis, a trace, and localization (their hazards are findings)."""
    config = campaign.config
    return "hold" in config.axes and config.localize and not strace.available() and not hold.unavailable()


def _with_targets(campaign: Campaign, plan: list) -> list:
    """The plan with the traced run's targets right after it (the same ones on --resume)."""
    traced = campaign.runs[1] if len(campaign.runs) > 1 else None
    if traced is None or not traced.trace_path or not Path(traced.trace_path).exists():
        return plan
    trace = load_trace(traced.trace_path, str(campaign.spec.workspace.path))
    base = traced.perturbation
    found = guided.targets(trace, base, min(guided.MAX_TARGETS, max(0, campaign.config.runs - 3)))
    if not found:
        return plan
    # alternate with the schedule, whose extremes (one CPU, ...) find other bugs early; the
    # control comes second: first it would delay the best target, last a short --runs cuts it
    control = guided.control(base)
    guided_runs = [found[0].perturbation, control, *(t.perturbation for t in found[1:])]
    merged = plan[:2] + _alternate(guided_runs, plan[2:])
    campaign.targets = {merged.index(t.perturbation, 2): t for t in found}
    campaign.control_index = merged.index(control, min(campaign.targets) + 1)
    return merged[: campaign.config.runs]


def _alternate(first: list, second: list) -> list:
    """first[0], second[0], first[1], second[1], ... then the rest of the longer one."""
    merged = [p for pair in zip(first, second) for p in pair]
    shorter = min(len(first), len(second))
    return merged + first[shorter:] + second[shorter:]


def _space(config: FuzzConfig) -> Space:
    return Space(
        jobs=config.jobs if "jobs" in config.axes else (config.jobs[0], config.jobs[0]),
        cpus=available_cpus(),
        vary_cpus="cpus" in config.axes,
        vary_jitter="jitter" in config.axes,
    )


def _stop_before(campaign: Campaign, index: int | None) -> str:
    """Why no further run starts ("" to go on)."""
    if index is None:
        return "done"
    if not _within_budget(campaign):
        return "budget spent"
    return ""


def _finish_run(campaign: Campaign, executor: Executor, events: Events, record: RunRecord) -> bool:
    """Store the run, keep its evidence, tell the user; False when the campaign must stop."""
    campaign.add_run(record)
    campaign.store.save_run(campaign.id, record)
    _keep_evidence(campaign, executor, record)
    events.run_finished(record, campaign.group_of(record), campaign.config.runs)
    if record.index == 0 and not record.ok:
        campaign.exit_reason = "reference build failed"
        return False
    if record.index == 0:
        _check_artifact_globs(campaign, record)
    if campaign.config.stop_on_first and campaign.diverged():
        campaign.exit_reason = "first divergence found"
        return False
    return True


def _within_budget(campaign: Campaign, slowdown: float = 1.0) -> bool:
    """Start another run (`slowdown` times a build: tracing costs more) only if it is
    expected to end inside the budget, keeping room for what follows: a traced hazard
    scan (~1.5 builds), or once the builds diverged, localization (two traced builds, step
    replays; ablation runs only if time is left)."""
    walls = [r.wall_s for r in campaign.runs] or [0.0]
    typical = max(statistics.median(walls), walls[-1])
    # step replays are paced over SPREAD_S (twice: plain, then stabilisers) whatever the build's length
    localize = 4 * typical + 2 * SPREAD_S if campaign.diverged() else 1.5 * typical
    reserve = localize if campaign.config.localize else 0.0
    return typical * 1.2 * slowdown + reserve <= campaign.seconds_left()


def _keep_evidence(campaign: Campaign, executor: Executor, record: RunRecord) -> None:
    """Keep the reference tree, and every later variant of a differing file, for diffs."""
    if record.index == 0:
        if record.ok and not campaign.reference_tree.exists() and executor.keep_tree(record, campaign.reference_tree):
            _drop_large_files(campaign.reference_tree)
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
            if executor.fetch(record, path, blob):
                campaign.kept[path] = campaign.kept.get(path, 0) + 1


def _drop_large_files(tree: Path) -> None:
    """The kept reference tree is for diffs, and files over BLOB_LIMIT are never diffed:
    a campaign's store growth stays bounded by the small files of one tree."""
    for path in tree.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size > BLOB_LIMIT:
            path.unlink()


def _drop_traces(campaign: Campaign) -> None:
    """Traces (often the largest files of a campaign) served its localization, whose
    findings are in the report; `explain --relocalize` traces again."""
    for trace in campaign.spec.logs.glob("*.strace"):
        trace.unlink(missing_ok=True)


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
    """A stored campaign, ready for replay or re-localization. It holds the store's lock
    (both build in the store's workspace); the caller closes `campaign.store`."""
    store = Store(store_path, exclusive=True)
    try:
        row = store.require_campaign(campaign_id)
        config = stored_config(row.source, row.command, row.seed, store_path, row.config)
        _check_rebuildable(row, config)
        return _campaign(config, store, row.id, row.seed, store.runs(row.id))
    except BaseException:
        store.close()
        raise


def _check_rebuildable(row: CampaignRow, config: FuzzConfig) -> None:
    """A replay must build the same source at the same path as the campaign's runs did."""
    if not config.source.is_dir():
        raise UsageError(f"campaign {row.id} built {row.source}, which is no longer a directory")
    recorded = row.config.get("workspace")
    if recorded is not None and recorded != str(_workspace_path(config)):
        raise UsageError(f"campaign {row.id} built in {recorded}, this store would build in "
                         f"{_workspace_path(config)} (the store moved): a build that records its path would differ")


def _open(config: FuzzConfig, store: Store) -> Campaign:
    # what runs besides the options: the build path, and the CPUs the schedule draws CPU sets from;
    # normalised through JSON, to compare with what the store gives back
    settings = json.loads(json.dumps({**config.to_json(), "workspace": str(_workspace_path(config)),
                                      "cpus": available_cpus()}))
    previous = _resumable(config, store) if config.resume else None
    if previous is None:
        cid = store.new_campaign(str(config.source.resolve()), config.command, config.seed, settings)
        return _campaign(config, store, cid, config.seed, [])
    _refuse_changed_settings(previous, settings)
    store.update_config(previous.id, settings)  # what now runs: a changed --runs, settings older stores lack
    return _campaign(config, store, previous.id, previous.seed, store.runs(previous.id))


def _resumable(config: FuzzConfig, store: Store) -> CampaignRow | None:
    """The latest campaign, for --resume to continue; None if it ran to its end (a new one starts)."""
    previous = store.campaign()
    if previous is None or previous.source != str(config.source.resolve()) or previous.command != config.command:
        raise UsageError(f"--resume: no campaign for this source and command in {config.store}")
    return previous if previous.finished is None else None


RESUMABLE_CHANGES = {"runs", "parallel"}  # more or fewer runs, or at once: what a run is stays the same
SETTING_NAMES = {  # stored setting → how the user sets it
    "axes": "--axes/--no-jitter/--no-affinity",
    "artifacts": "--artifact",
    "default_ignore": "default ignores (--no-default-ignore)",
    "workspace": "workspace (the store moved)",
    "cpus": "CPUs available (another machine or affinity)",
}


def _refuse_changed_settings(previous: CampaignRow, settings: dict) -> None:
    """Runs made under other settings must not be compared as one campaign's runs."""
    changed = [key for key, value in settings.items()
               if key not in RESUMABLE_CHANGES and key in previous.config and previous.config[key] != value]
    if changed:
        differences = "; ".join(
            f"{SETTING_NAMES.get(key, '--' + key.replace('_', '-'))} {_shown(key, previous.config[key])} "
            f"→ {_shown(key, settings[key])}" for key in changed)
        raise UsageError(f"--resume: campaign {previous.id} ran with other settings ({differences}); "
                         "resume with its settings, or drop --resume to start a new campaign")


def _shown(key: str, value) -> str:
    if key == "jobs":
        return f"{value[0]}-{value[1]}"
    if key == "cpus":
        return format_cpus(value)
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return ",".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


def _workspace_path(config: FuzzConfig) -> Path:
    """The one path every run of a campaign, and every replay of it, builds at."""
    source = config.source.resolve()
    return source if config.in_place else config.store.resolve() / "workspace" / (source.name or "tree")


def _campaign(config: FuzzConfig, store: Store, cid: int, seed: int, runs: list[RunRecord]) -> Campaign:
    workspace = Workspace(config.source.resolve(), _workspace_path(config), config.clean,
                          frozenset({config.store.resolve()}))
    spec = BuildSpec(config.command, workspace, store.campaign_dir(cid) / "logs", config.timeout)
    campaign = Campaign(config, store, cid, seed, spec)
    for record in runs:
        campaign.add_run(record)
    return campaign


class _timed:
    def __init__(self, campaign: Campaign, name: str, events: Events):
        self.campaign, self.name, self.events = campaign, name, events

    def __enter__(self):
        self.events.phase(self.name)
        self.start = time.monotonic()

    def __exit__(self, *exc):
        self.campaign.phases[self.name] = round(time.monotonic() - self.start, 3)
