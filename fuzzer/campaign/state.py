"""What one campaign's phases share: its runs and their digest groups, its budget, the
events it reports, and the verdict its runs support."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, TypeVar

from fuzzer.campaign.evidence import Evidence, diff_reserve_s
from fuzzer.compare import Comparison, variant_label
from fuzzer.config import MIN_SUCCESSFUL, FuzzConfig
from fuzzer.execute.executor import Executor
from fuzzer.execute.local import BuildSpec, LocalExecutor, default_timeout
from fuzzer.execute.replay_slots import replays_at_once
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.explain.builds import Builds, Selection
from fuzzer.memory import Subject
from fuzzer.observe import Manifest
from fuzzer.model import ExitCode, ExitReason, Report, RunKind, Verdict
from fuzzer.store import Store

R = TypeVar("R")  # what a phase's work returns


class Events(Protocol):
    def started(self, campaign: int, seed: int, store: Path, workspace: Path, resumed: int) -> None: ...
    def run_finished(self, record: RunRecord, group: str | None, planned: int) -> None: ...
    def phase(self, name: str) -> None: ...


class SilentEvents:
    def started(self, campaign: int, seed: int, store: Path, workspace: Path, resumed: int) -> None:
        pass

    def run_finished(self, record: RunRecord, group: str | None, planned: int) -> None:
        pass

    def phase(self, name: str) -> None:
        pass


SILENT = SilentEvents()
ExecutorFactory = Callable[[BuildSpec], Executor]  # the local executor unless told otherwise


@dataclass
class Outcome:
    report: Report
    exit_code: ExitCode
    message: str = ""


def verdict(runs: list[RunRecord], comparison: Comparison | None, exit_reason: ExitReason,
            interrupted_after_builds: bool = False) -> Verdict:
    """A verdict stands on evidence: `reproducible` needs an uninterrupted campaign with at
    least two successful builds that all agree; a difference or a perturbed failure is
    `unreproducible`, and a Ctrl-C takes nothing back: not after the builds (in the audit
    or localization), nor during them once one differed or failed; anything less is
    `inconclusive`, and an interrupted campaign is never green."""
    if runs and not runs[0].ok:
        return Verdict.REFERENCE_FAILED
    if comparison is None:
        return Verdict.INCONCLUSIVE
    if not comparison.reproducible:
        return Verdict.UNREPRODUCIBLE
    if exit_reason == ExitReason.INTERRUPTED or interrupted_after_builds or sum(r.ok for r in runs) < MIN_SUCCESSFUL:
        return Verdict.INCONCLUSIVE
    return Verdict.REPRODUCIBLE


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
    exit_reason: ExitReason = ExitReason.UNSET
    interrupted_in: str = ""  # the phase a Ctrl-C ended (`explore` included): no phase runs after it
    groups: dict[str, str] = field(default_factory=dict)  # selected-manifest digest → label
    digests: dict[int, str] = field(default_factory=dict)  # run index → selected-manifest digest
    started: float = field(default_factory=lambda: time.monotonic())
    executor_factory: ExecutorFactory = LocalExecutor
    counters: dict[RunKind, int] = field(default_factory=dict)  # runs made so far of each localization kind
    notes: list[str] = field(default_factory=list)  # for the report: what this campaign could not do
    unreached: dict[str, str] = field(default_factory=dict)  # axis → why its runs did not reach the whole build
    targets: dict = field(default_factory=dict)  # run index → the guided.Target it ran
    control_index: int | None = None  # the run with the targets' settings and no hold
    unread: tuple[str, ...] = ()  # varied axes none of whose readers the hazard scan saw run (shuffle: no make)
    settings: dict = field(default_factory=dict)  # for the report: each setting and where it came from
    evidence: Evidence = field(init=False)

    def __post_init__(self):
        self.evidence = Evidence(self.store.campaign_dir(self.id), self.spec.workspace.path.name)

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
        """Of the --budget, in this invocation (a resumed campaign gets a new budget), for the
        builds, the audit and localization: the diffs that end the campaign keep a share."""
        return self.seconds_left_for_diffs() - diff_reserve_s(self.config.budget_s, self.config.diff_timeout)

    def seconds_left_for_diffs(self) -> float:
        budget = self.config.budget_s
        return float("inf") if budget is None else budget - (time.monotonic() - self.started)

    @property
    def dir(self) -> Path:
        return self.evidence.dir

    @property
    def selection(self) -> Selection:
        config = self.config
        return Selection(config.artifacts, config.ignore, self.evidence.settled, config.count_bookkeeping)

    def select(self, manifest: Manifest) -> Manifest:
        """The compared files, settled against the reference's (`Selection.settled`)."""
        reference = self.runs[0].manifest if self.runs and self.runs[0].index == 0 else None
        return self.selection.settled(manifest, reference)

    def select_ignored(self, manifest: Manifest) -> Manifest:
        return self.selection.everything(manifest)

    def builds(self) -> Builds:
        """What the explain stage is handed: the runs so far, and builds until the budget ends."""
        config, workspace = self.config, self.spec.workspace
        return Builds(tuple(self.runs), self.selection, config.command, str(workspace.path), workspace.parent_outputs,
                      tuple(workspace.compared_places()), self.spec.logs, time.monotonic() + self.seconds_left(),
                      self.request, replays_at_once(config), config.stabilizers, str(config.store), self.id)

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
            self.digests[record.index] = self.select(record.built).digest()
        return self.digests[record.index]

    def differs_from_reference(self, record: RunRecord) -> bool:
        """A failed run, or one whose compared files (upload records settled) differ from the reference's."""
        return self.selection.differs(record, self.runs[0])

    def diverged(self) -> bool:
        return len(self.groups) > 1 or (bool(self.runs) and self.runs[0].ok and not all(r.ok for r in self.runs))

    @property
    def resumable(self) -> bool:
        """Ctrl-C ended its builds: what it found is reported, and `--resume` builds the rest."""
        return self.exit_reason == ExitReason.INTERRUPTED

    def verdict(self, comparison: Comparison | None) -> Verdict:
        return verdict(self.runs, comparison, self.exit_reason, bool(self.interrupted_in))

    def subject(self) -> Subject:
        """Whose memory this campaign reads and writes."""
        return Subject(self.store, self.id, str(self.config.source.resolve()), self.config.command)


class timed:
    """Times one named phase into `campaign.phases`, telling `events` it started."""

    def __init__(self, campaign: Campaign, name: str, events: Events):
        self.campaign, self.name, self.events = campaign, name, events

    def __enter__(self):
        self.events.phase(self.name)
        self.start = time.monotonic()

    def __exit__(self, *exc: object) -> None:
        self.campaign.phases[self.name] = round(time.monotonic() - self.start, 3)


def with_own_executor(campaign: Campaign, phase: str, events: Events, work: Callable[[Executor], R]) -> R | None:
    """`work` on an executor of its own, timed as `phase`: None when Ctrl-C ends it or ended
    an earlier phase (the campaign then concludes with what it has), and the workspace
    removed whatever happens."""
    if campaign.interrupted_in:
        return None
    try:
        with timed(campaign, phase, events):
            executor = campaign.executor_factory(campaign.spec)
            try:
                return work(executor)
            finally:
                executor.close()
    except KeyboardInterrupt:
        campaign.interrupted_in = phase
        campaign.notes.append(f"interrupted during the {phase} phase: what it found before is reported, the rest was "
                              f"not done; `buildfuzz explain --relocalize` localizes the stored builds again")
        return None
    finally:
        campaign.spec.workspace.remove()
