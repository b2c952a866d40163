"""The one `Report` every format renders, with its JSON form (the contract in docs/contracts.md).

`to_json`/`from_json` round-trip, so a stored report can be rendered again in any
format (`buildfuzz explain`, the HTML page) without re-running anything.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

SCHEMA = 1

REPRODUCIBLE = "reproducible"
UNREPRODUCIBLE = "unreproducible"
REFERENCE_FAILED = "reference-failed"  # nothing to compare
INCONCLUSIVE = "inconclusive"  # no verdict: interrupted, or fewer than two successful builds
EXIT_CODES = {REPRODUCIBLE: 0, UNREPRODUCIBLE: 1, REFERENCE_FAILED: 3, INCONCLUSIVE: 4}  # docs/contracts.md, "Exit codes"


@dataclass(frozen=True)
class RunSummary:
    index: int
    perturbation: dict
    status: str  # ok | failed | timeout
    exit_code: int | None
    wall_s: float
    digest: str | None  # digest of the compared part of the manifest
    group: str | None  # digest group label: A is the reference's
    log_tail: str = ""
    log_path: str = ""
    jitter_events: int = 0
    overlapped_with: list[int] = field(default_factory=list)  # runs building at the same time on its host (--parallel)
    finding_id: str = ""  # a failed run's finding (fuzzer/findings.py): runs failing alike share one
    reason: str = ""  # why it ran (fuzzer.plan.Reason); "" for a run stored by an earlier buildfuzz


@dataclass(frozen=True)
class VariantSummary:
    label: str
    digest: str
    runs: list[int]


@dataclass(frozen=True)
class InsideSummary:
    """What the comparators saw inside two variants (fuzzer/compare/inside.py)."""

    format: str  # zip | tar.xz | ar | elf | pyc | text | bytes ...
    summary: str  # one line: "44 members identical in content; only zip entry timestamps differ"
    metadata_only: bool  # every member identical in content: the finding is of kind `metadata`
    members: list[str] = field(default_factory=list)  # members whose content differs (outer/inner)
    identical: int = 0  # members identical in content
    metadata: list[str] = field(default_factory=list)  # the metadata that differs
    details: list[str] = field(default_factory=list)  # one line per differing member
    notes: list[str] = field(default_factory=list)  # what was compared as bytes, and why


@dataclass(frozen=True)
class MetadataStabilizer:
    """A metadata-only artifact's usual stabiliser, tested by builds (explain/artifact_metadata.py)."""

    variable: str  # SOURCE_DATE_EPOCH
    stable: bool  # the builds with it set were identical
    builds: int  # extra builds at the reference settings with the variable set
    identical: int  # of them, how many gave the first one's bytes
    evidence: str = ""


@dataclass(frozen=True)
class ArtifactFinding:
    path: str
    variants: int
    groups: list[VariantSummary]
    separated_by: list[str]  # human lines: "cpus in {1} → A; cpus in {2} → B"
    axes: list[str]  # axes that separate the variants
    same_conditions: bool  # differs between runs with identical perturbation
    diff: str = ""
    diff_runs: list[int] = field(default_factory=list)
    diff_files: list[str] = field(default_factory=list)  # diffoscope's reports (.html, .txt), beside the report
    inside: InsideSummary | None = None  # of the diffed pair
    metadata_stabilizer: MetadataStabilizer | None = None  # tested when `inside` is metadata-only
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign


@dataclass(frozen=True)
class PackageFile:
    """A package file the campaign compared (fuzzer/report/packages.py)."""

    path: str  # relative to the source root: ../x.deb beside it; an --output file by its absolute path
    size: int  # in the reference build, bytes
    digest: str  # sha256, in the reference build
    variants: int  # distinct contents across the successful runs: 1 when identical in every one
    runs: int  # the successful runs compared
    expected: list[str] = field(default_factory=list)  # a .buildinfo/.changes's variants differ only in these, as in every build


@dataclass(frozen=True)
class WriterProcess:
    """The smallest process that wrote a culprit's differing bytes, inside the step the
    culprit's `command` names (fuzzer/trace/writers.py)."""

    command: str
    argv: list[str]
    cwd: str
    identity: str  # the same in every run: command, cwd, which of the step's processes it is; no pid
    wrote: list[str]  # the files whose bytes it produced (a copy's source, e.g. under /tmp)
    replayed: bool  # the culprit's replays ran this process alone, not the whole step
    not_replayable: str = ""  # why smaller processes could not be replayed alone, when some could not


@dataclass(frozen=True)
class Culprit:
    command: str
    argv: list[str]
    cwd: str
    outputs: list[str]
    kind: str  # intrinsic | race | order | parallelism-level | unknown
    axis: str | None = None
    stabilized_by: list[str] = field(default_factory=list)  # a minimal set, fixed together
    evidence: str = ""
    chain: list[str] = field(default_factory=list)  # artifact → … → this step's output
    writer: list[str] = field(default_factory=list)  # leaf process that wrote the output
    other_step: str | None = None  # the concurrent step, for races
    stabilizer_alternatives: list[list[str]] = field(default_factory=list)  # other minimal sets that work too
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign
    writer_process: WriterProcess | None = None  # the process that wrote the bytes, when the trace names one
    fix: str = ""  # `buildfuzz fix`: the path of its patch (fuzzer/fix/)
    fix_status: str = ""  # `buildfuzz fix`: proven: counts | suggested, not proven: why | no patch: why


@dataclass(frozen=True)
class AuditedStep:
    """One step the step audit replayed alone, or could not (fuzzer/explain/audit.py)."""

    identity: str  # the same in every run and every night: command, cwd, occurrence
    command: str
    cwd: str
    outputs: list[str]  # the compared files (or their upstream) whose bytes its replays compared
    result: str  # stable | varies | replay-failed | not-replayable | left
    detail: str = ""  # what the replays gave, or why it was not replayed
    replays: int = 0
    seconds: float = 0.0  # what its replays took, wall time
    last_audit: str = ""  # when an earlier campaign last audited it (ISO time; "" never)
    audited: str = ""  # when this campaign's replays of it ended ("" not replayed)
    replay: str = ""  # a shell line that replays it by hand in the traced tree


@dataclass(frozen=True)
class AuditSummary:
    """The step audit (`--check-steps`): one traced build, its steps replayed alone."""

    share: float  # of the replayable steps, asked for
    reaching: int  # steps whose outputs reach a compared file
    audited: int  # replayed to the end: stable, varies or replay-failed; never the not replayable
    roots: int  # audited steps that varied: culprits without a second build
    left: int  # replayable steps not audited this time
    why_left: str  # "" when none was left
    parallel: int  # replays at once
    wall_s: float  # the audit's replays, wall time
    step_s: float  # the steps' replays added up, each its own wall time: over wall_s, how many ran at once
    steps: list[AuditedStep] = field(default_factory=list)


@dataclass(frozen=True)
class Hazard:
    type: str  # read-before-write | write-write | duplicate-execution | mkdir-race | listing-race
    file: str
    reader: str  # write-write: the second writer; mkdir-race: the step writing into the directory
    writer: str  # mkdir-race: the step creating the directory; listing-race: the step creating the file
    detail: str = ""  # what happened, in one traced run
    evidence: str = ""  # why the two steps were not ordered
    steps: list[str] = field(default_factory=list)  # every step involved in this file's conflicts
    status: str = "latent"  # latent | manifest (failing or divergent runs show it) | confirmed (a targeted run made it manifest)
    reproduce: str = ""  # for a confirmed hazard: the replay command that makes it manifest
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign
    files: list[str] = field(default_factory=list)  # every file it covers (a recipe run several times at once: all it wrote)
    runs: list[str] = field(default_factory=list)  # the distinct runs its evidence rests on
    fix: str = ""  # `buildfuzz fix`: the path of its patch (fuzzer/fix/)
    fix_status: str = ""  # `buildfuzz fix`: proven: counts | suggested, not proven: why | no patch: why


@dataclass(frozen=True)
class Finding:
    """One thing found, under an id that stays the same across campaigns (fuzzer/findings.py)."""

    id: str  # a short hash of what it is: never of timings or run numbers
    kind: str  # artifact | metadata | failure | culprit | hazard
    what: str
    status: str  # new (first seen, or back after a fix) | still | fixed (by this campaign)
    first_campaign: int
    first_seen: str  # ISO 8601, UTC
    last_campaign: int
    last_seen: str
    known: bool = False  # in the --baseline or accepted in the store: it does not fail CI
    rate: dict = field(default_factory=dict)  # this campaign's k of n builds with its interval (fuzzer/rates.py); {} for hazards
    pooled: dict = field(default_factory=dict)  # the same, summed over every campaign that counted it, with "campaigns"


@dataclass(frozen=True)
class Report:
    command: str
    verdict: str  # reproducible | unreproducible | reference-failed | inconclusive
    runs: list[RunSummary]
    failed_runs: int
    divergent_artifacts: list[ArtifactFinding]
    culprits: list[Culprit] = field(default_factory=list)
    hazards: list[Hazard] = field(default_factory=list)
    reproduce: str = ""
    source: str = ""
    seed: int = 0
    campaign: int = 0
    artifacts_checked: int = 0
    notes: list[str] = field(default_factory=list)
    exit_reason: str = ""
    phases: dict[str, float] = field(default_factory=dict)
    localized: bool = False
    minimal_reproducer: str | None = None
    # each setting the run used → {"value": ..., "source": command line | environment | file | default, "origin": ...}
    settings: dict[str, dict] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)  # this campaign's, and those it found fixed
    packages: list[PackageFile] = field(default_factory=list)  # the package files compared
    confidence: dict = field(default_factory=dict)  # diverging builds of the successful perturbed ones, with their bound
    audit: AuditSummary | None = None  # the step audit, with --check-steps
    schema: int = SCHEMA

    @property
    def reproducible(self) -> bool:
        return self.verdict == REPRODUCIBLE

    @property
    def exit_code(self) -> int:
        """What `buildfuzz run` exits with for this report. Builds that differ only in known
        ways (every finding in the --baseline or accepted) exit 0: CI fails on new findings."""
        current = [f for f in self.findings if f.status != "fixed"]
        if self.verdict == UNREPRODUCIBLE and current and all(f.known for f in current):
            return EXIT_CODES[REPRODUCIBLE]
        return EXIT_CODES[self.verdict]

    def to_json(self) -> dict:
        data = asdict(self)
        return {"schema": data.pop("schema"), **data}

    @classmethod
    def from_json(cls, data: dict) -> "Report":
        nested = {
            "runs": RunSummary,
            "divergent_artifacts": ArtifactFinding,
            "culprits": Culprit,
            "hazards": Hazard,
            "findings": Finding,
            "packages": PackageFile,
        }
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key, kind in nested.items():
            values[key] = [_load(kind, item) for item in data.get(key, [])]
        if data.get("audit"):
            audit = data["audit"]
            values["audit"] = _load(AuditSummary, {**audit, "steps": [_load(AuditedStep, s) for s in audit["steps"]]})
        return cls(**values)


def _load(kind, item: dict):
    known = {f.name for f in fields(kind)}
    values = {k: v for k, v in item.items() if k in known}
    if kind is ArtifactFinding:
        values["groups"] = [VariantSummary(**g) for g in item.get("groups", [])]
        for key, nested in (("inside", InsideSummary), ("metadata_stabilizer", MetadataStabilizer)):
            values[key] = _load(nested, item[key]) if item.get(key) else None
    if kind is Culprit and item.get("writer_process"):
        values["writer_process"] = _load(WriterProcess, item["writer_process"])
    return kind(**values)
