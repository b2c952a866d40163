"""The one `Report` every format renders: frozen msgspec Structs whose encoding is the
JSON report (the contract in docs/contracts.md) and whose JSON Schema is generated from
them (fuzzer/report/schema.py). A stored report decodes back into them
(fuzzer/report/json_format.py), so it can be rendered again in any format (`buildfuzz
explain`, the HTML page) without re-running anything. The culprits, hazards and findings
are the domain's own types (found.py). On the floor with them: the explain stage, the
findings and their rates make parts of the report, and the report package renders it.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from fuzzer.model.found import Culprit, Finding, Hazard, Model, Rate, UnnamedFile
from fuzzer.model.vocabulary import (AuditResult, Basis, ExitCode, ExitReason, FindingStatus, NotTried, Reason,
                                     RunStatus, SettingSource, Verdict)

REPORT_SCHEMA = 2  # 2: a hazard's `runs` are numbers, its traced runs' labels in `traced`

# why the run is in the plan; "" for a run stored by an earlier buildfuzz
RunReason = Annotated[str, msgspec.Meta(extra_json_schema={"enum": ["", *(r.value for r in Reason)]})]
# each setting the run used → {"value": ..., "source": command line | environment | file | default, "origin": ...}
Settings = Annotated[dict[str, Any], msgspec.Meta(extra_json_schema={"additionalProperties": {
    "type": "object",
    "properties": {"value": {}, "source": {"enum": sorted(s.value for s in SettingSource)},
                   "origin": {"type": "string"}},
    "required": ["value", "source", "origin"],
}})]


class RunSummary(Model, frozen=True):
    """One build of the campaign: its perturbation, how it ended, and its digest group."""

    index: int
    perturbation: dict[str, Any]
    status: RunStatus
    exit_code: int | None
    wall_s: float
    digest: str | None  # digest of the compared part of the manifest
    group: str | None  # digest group label: A is the reference's
    log_tail: str = ""
    log_path: str = ""
    jitter_events: int = 0
    overlapped_with: list[int] = []  # runs building at the same time on its host (--parallel)
    finding_id: str = ""  # a failed run's finding (fuzzer/findings.py): runs failing alike share one
    reason: RunReason = ""  # why it ran (fuzzer.model.Reason)
    host: str = ""  # the worker that built it (--dask); "" for the campaign's own machine


class VariantSummary(Model, frozen=True):
    """One content a divergent artifact had, and the runs that built it."""

    label: str
    digest: str
    runs: list[int]


class InsideSummary(Model, frozen=True):
    """What the comparators saw inside two variants (fuzzer/compare/inside.py)."""

    format: str  # zip | tar.xz | ar | elf | pyc | text | bytes ...
    summary: str  # one line: "44 members identical in content; only zip entry timestamps differ"
    metadata_only: bool  # every member identical in content: the finding is of kind `metadata`
    members: list[str] = []  # members whose content differs (outer/inner)
    identical: int = 0  # members identical in content
    metadata: list[str] = []  # the metadata that differs
    details: list[str] = []  # one line per differing member
    notes: list[str] = []  # what was compared as bytes, and why


class MetadataStabilizer(Model, frozen=True):
    """A metadata-only artifact's usual stabiliser, tested by builds (explain/artifact_metadata.py)."""

    variable: str  # SOURCE_DATE_EPOCH
    stable: bool  # the builds with it set were identical
    builds: int  # extra builds at the reference settings with the variable set
    identical: int  # of them, how many gave the first one's bytes
    evidence: str = ""


class ArtifactFinding(Model, frozen=True):
    """A compared file whose content differs between successful builds."""

    path: str
    variants: int
    groups: list[VariantSummary]
    separated_by: list[str]  # human lines: "cpus in {1} → A; cpus in {2} → B"
    axes: list[str]  # axes that separate the variants
    same_conditions: bool  # differs between runs with identical perturbation
    diff: str = ""
    diff_runs: list[int] = []
    diff_files: list[str] = []  # diffoscope's reports (.html, .txt), beside the report
    inside: InsideSummary | None = None  # of the diffed pair
    metadata_stabilizer: MetadataStabilizer | None = None  # tested when `inside` is metadata-only
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign


class PackageFile(Model, frozen=True):
    """A package file the campaign compared (fuzzer/report/packages.py)."""

    path: str  # relative to the source root: ../x.deb beside it; an --output file by its absolute path
    size: int  # in the reference build, bytes
    digest: str  # sha256, in the reference build
    variants: int  # distinct contents across the successful runs: 1 when identical in every one
    runs: int  # the successful runs compared
    expected: list[str] = msgspec.field(default_factory=list)  # a .buildinfo/.changes's variants differ only in these, as in every build


class BookkeepingFile(Model, frozen=True):
    """A build system's bookkeeping file whose contents differed between the successful runs
    (fuzzer/compare/bookkeeping.py)."""

    path: str  # as a divergent artifact's
    tool: str  # whose bookkeeping: Meson, ninja, CMake, autotools
    variants: int  # distinct contents across the successful runs (absent in some counts as one)
    runs: int  # the successful runs compared


class Bookkeeping(Model, frozen=True):
    """The build systems' bookkeeping that differed, and whether it decided the verdict."""

    counted: bool = False  # --count-bookkeeping: it counts like any file; else it is settled as the reference's
    differed: list[BookkeepingFile] = []


class AuditedStep(Model, frozen=True):
    """One step the step audit replayed alone, or could not (fuzzer/explain/audit.py)."""

    identity: str  # the same in every run and every night: command, cwd, occurrence
    command: str
    cwd: str
    outputs: list[str]  # the compared files (or their upstream) whose bytes its replays compared
    result: AuditResult
    detail: str = ""  # what the replays gave, or why it was not replayed
    replays: int = 0
    seconds: float = 0.0  # what its replays took, wall time
    last_audit: str = ""  # when an earlier campaign last audited it (ISO time; "" never)
    audited: str = ""  # when this campaign's replays of it ended ("" not replayed, or a replay failed)
    replay: str = ""  # a shell line that replays it by hand in the traced tree
    step_s: float = 0.0  # what it (or the writer process replays run) took in the traced build: one replay's cost


class AuditSummary(Model, frozen=True):
    """The step audit (`--check-steps`): one traced build, its steps replayed alone."""

    share: float  # of the replayable steps, asked for
    reaching: int  # steps whose outputs reach a compared file
    audited: int  # replayed to the end and compared: stable or varies; never a failed replay
    roots: int  # audited steps that varied: culprits without a second build
    left: int  # replayable steps not audited this time
    why_left: str  # "" when none was left
    parallel: int  # replays at once
    wall_s: float  # the audit's replays, wall time
    step_s: float  # the steps' replays added up, each its own wall time (waits for a CPU turn included)
    steps: list[AuditedStep] = []
    short: int = 0  # stable steps the budget left with fewer replays than REPLAYS (a claim of stable needs)
    unreplayed: int = 0  # steps chosen for this audit that the budget left unreplayed
    unfinished_s: float = 0.0  # about what their missing replays take, serially, from each step's traced time


class CutShort(Model, frozen=True):
    """What the localization budget cut short, and about what would complete it: each claim's
    missing replays × its step's measured time, added up, ÷ the replay slots
    (fuzzer/report/cut_short.py)."""

    budget_s: float  # the localization budget this campaign had
    more_s: float  # about what completing the claims below takes, on top of it
    suggested_s: float  # budget_s + more_s, up to whole minutes: the --localize-budget that would complete them
    unsearched: list[str] = []  # culprits that vary alone with no stabiliser set confirmed before the budget ran out
    undecided: list[str] = []  # culprits left without a kind: their replays or trials did not fit
    short_steps: int = 0  # audited steps that matched with fewer replays than a claim of stable needs
    unreplayed_steps: int = 0  # steps the audit chose and the budget left unreplayed
    unexplained_roots: int = 0  # root steps localization left unexplained (their differing files name no step)


class AxisBound(Model, frozen=True):
    """What the drawn runs with a seed of one axis's own (a `--shuffle` seed, a hash seed)
    say of it: `rate` counts those that failed or differed from the reference, `seen` of
    `builds`, with its exact interval, and with none, `upper_bound` (as the verdict's)."""

    axis: str  # its name, as in --axes and --vary
    label: str  # for people
    rate: Rate


class AxisScope(Model, frozen=True):
    """One axis of the campaign's scope (fuzzer/report/scope.py): the runs that varied it
    from the reference, the values its runs took, or why none varied it."""

    axis: str  # its name, as in --axes and --vary
    label: str  # for people
    runs: int  # runs that differed from the reference along it
    values: int  # distinct values the runs took, the reference's included
    not_tried: NotTried = NotTried.TRIED  # why no run varied it
    problem: str = ""  # for an unavailable axis: what is missing here; for one no program read: which did not run


class Origin(Model, frozen=True):
    """Which buildfuzz made a report, on which machine and when: for reading it months later."""

    buildfuzz: str  # its version
    host: str  # the machine the campaign ran on (its hostname); a run built elsewhere names its own
    started: str  # when the campaign began, ISO 8601 in UTC
    ended: str  # when this report was made


class Report(Model, frozen=True):
    """What a campaign found (docs/contracts.md, "The JSON report")."""

    command: str
    verdict: Verdict
    runs: list[RunSummary]
    failed_runs: int
    divergent_artifacts: list[ArtifactFinding]
    culprits: list[Culprit] = []
    hazards: list[Hazard] = []
    reproduce: str = ""
    source: str = ""
    seed: int = 0
    campaign: int = 0
    artifacts_checked: int = 0
    notes: list[str] = []
    exit_reason: ExitReason = ExitReason.UNSET
    phases: dict[str, float] = {}
    localized: bool = False
    minimal_reproducer: str | None = None
    settings: Settings = {}
    findings: list[Finding] = []  # this campaign's, and those it found fixed
    packages: list[PackageFile] = []  # the package files compared
    bookkeeping: Bookkeeping = msgspec.field(default_factory=Bookkeeping)  # build systems' own files that differed
    confidence: Rate = {}  # diverging builds of the successful perturbed ones, with their bound
    axis_bounds: list[AxisBound] = []  # each axis whose samples are seeds: its own count and bound
    audit: AuditSummary | None = None  # the step audit, with --check-steps
    unnamed: list[UnnamedFile] = []  # files the runs differed in that no culprit is named for, each with why
    cut_short: CutShort | None = None  # what the localization budget cut short; None: nothing
    origin: Origin | None = None  # None in reports stored before buildfuzz recorded it
    scope: list[AxisScope] = []  # every axis: tried how often, or why not
    basis: Basis = Basis.NONE  # an unreproducible verdict's: plain builds, or held or shuffled ones alone
    first_in_store: bool = False  # no earlier campaign of this source and command in its store: all is new
    schema: int = REPORT_SCHEMA  # written first (json_format): what a reader checks before anything else

    @property
    def bounds(self) -> list[str]:
        """What the counts say, for reading: the verdict's bound, then each seeded axis's."""
        return ([self.confidence["text"]] if self.confidence else []) + [b.rate["text"] for b in self.axis_bounds]

    @property
    def reproducible(self) -> bool:
        return self.verdict == Verdict.REPRODUCIBLE

    @property
    def exit_code(self) -> ExitCode:
        """What `buildfuzz run` exits with for this report. Builds that differ only in known
        ways (every finding in the --baseline or accepted) exit 0: CI fails on new findings."""
        current = [f for f in self.findings if f.status != FindingStatus.FIXED]
        if self.verdict == Verdict.UNREPRODUCIBLE and current and all(f.known for f in current):
            return ExitCode.REPRODUCIBLE
        return Verdict(self.verdict).exit_code
