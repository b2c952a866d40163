"""The domain's vocabulary, defined once: what a campaign concludes (`Verdict`), how the
command line exits (`ExitCode`), why a campaign stopped (`ExitReason`), how a build ended
(`RunStatus`), the stabilisers localization tries (`Stabilizer`), what the step audit made
of a step (`AuditResult`), the kind of cause a culprit is (`Kind`), and what a campaign
finds: a `Culprit` (with its `WriterProcess`),
a `Hazard` (with its `HazardType` and `HazardStatus`) and a `Finding` (with its `FindingKind` and
`FindingStatus`). Trace, explain, guided, memory and every report format use these;
`fuzzer/report/model.py` builds the report out of them.

The types are frozen msgspec Structs: the JSON report is their encoding, its JSON Schema
is generated from them (`fuzzer/report/schema.py`), and a stored report decodes back into
them, refusing keys they do not know. The enums whose values reach JSON are str-valued,
so a member is written as its string and compares equal to it (docs/contracts.md).
One host fact lives here too, below every layer that asks it: the CPUs this process may run on.
"""

from __future__ import annotations

import os
from enum import IntEnum, StrEnum
from typing import Annotated

import msgspec


class Model(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What every type of the report shares: immutable, and a stored report with a key it
    does not know is refused, not silently dropped."""


class ExitCode(IntEnum):
    """What `buildfuzz` exits with (docs/contracts.md, "Exit codes"); `replay` exits
    REPRODUCIBLE when the build matched the reference, UNREPRODUCIBLE when it reproduced."""

    REPRODUCIBLE = 0
    UNREPRODUCIBLE = 1
    USAGE = 2  # bad usage or input (errors.UsageError), or nothing was compared
    REFERENCE_FAILED = 3
    NO_VERDICT = 4  # interrupted, or fewer than two successful builds
    INTERNAL = 5  # a bug: one line on stderr, the traceback in a log file


class Verdict(StrEnum):
    """What a campaign concludes: the JSON report's `verdict`."""

    REPRODUCIBLE = "reproducible"
    UNREPRODUCIBLE = "unreproducible"
    REFERENCE_FAILED = "reference-failed"  # nothing to compare
    INCONCLUSIVE = "inconclusive"  # no verdict: interrupted, or fewer than two successful builds

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.NO_VERDICT if self is Verdict.INCONCLUSIVE else ExitCode[self.name]


class ExitReason(StrEnum):
    """Why a campaign stopped building: the JSON report's `exit_reason`."""

    UNSET = ""  # it has not stopped (yet)
    ALL_RUNS_DONE = "all runs done"
    BUDGET_SPENT = "budget spent"
    CONFIDENCE_REACHED = "confidence reached"  # --until-confidence
    FIRST_DIVERGENCE = "first divergence found"  # --stop-on-first
    REFERENCE_FAILED = "reference build failed"
    INTERRUPTED = "interrupted"  # Ctrl-C, SIGTERM: no verdict


class RunStatus(StrEnum):
    """How one build ended: the JSON report's run `status`."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"  # killed after --timeout (a failed run, too)


class Stabilizer(StrEnum):
    """The stabiliser candidates, most common causes first (the order localization tries
    them and `--stabilizers` lists them); what fixing each means is in
    `fuzzer/explain/stabilizers.py`'s TABLE."""

    PYTHONHASHSEED = "PYTHONHASHSEED"
    ASLR = "ASLR"
    SOURCE_DATE_EPOCH = "SOURCE_DATE_EPOCH"
    PERL_HASH_SEED = "PERL_HASH_SEED"
    CLOCK = "clock"
    TZ = "TZ"
    LC_ALL = "LC_ALL"
    HOME = "HOME"
    UMASK = "umask"


STABILIZERS = tuple(s.value for s in Stabilizer)


class AuditResult(StrEnum):
    """What the step audit made of one step: the JSON report's audit step `result`."""

    STABLE = "stable"  # its replays alone gave the same bytes
    VARIES = "varies"  # they did not: a root without a second build
    REPLAY_FAILED = "replay-failed"  # a replay alone failed (its detail says how)
    NOT_REPLAYABLE = "not-replayable"  # alone it would not see what it saw (fuzzer/trace/writers.py)
    LEFT = "left"  # replayable, not audited this time (the budget, or the --check-steps share)

    @property
    def replayed(self) -> bool:
        """Replayed to the end and compared: what an audit counts, and the store remembers as
        audited (a failed replay checked nothing: the step stays least recently audited)."""
        return self in (AuditResult.STABLE, AuditResult.VARIES)


class Kind(StrEnum):
    """The kind of cause a culprit is (docs/contracts.md: `kind`)."""

    INTRINSIC = "intrinsic"  # varies replayed alone on identical inputs
    RACE = "race"  # its inputs or shared state depend on an unordered step
    ORDER = "order"  # follows the order or timing in which its inputs appeared
    PARALLELISM_LEVEL = "parallelism-level"  # follows the CPU set or -j
    UNKNOWN = "unknown"  # not enough evidence to name one


NAMED_KINDS = tuple(k for k in Kind if k is not Kind.UNKNOWN)  # what evidence can name (and a scenario expect)


class HazardType(StrEnum):
    """The conflict a hazard is (docs/contracts.md: hazard `type`)."""

    READ_BEFORE_WRITE = "read-before-write"  # a `stat`, `access` or failed `open` counts as a read
    WRITE_WRITE = "write-write"  # or a write and a delete
    DUPLICATE = "duplicate-execution"  # one recipe running several times at once
    MKDIR_RACE = "mkdir-race"  # a directory created while another step writes into it
    LISTING_RACE = "listing-race"  # a listing while another step adds to the directory


class HazardStatus(StrEnum):
    """What shows a hazard: the traces alone, the campaign's own runs, or a targeted run."""

    LATENT = "latent"  # only the traces show the two steps unordered
    MANIFEST = "manifest"  # the campaign's failing or divergent runs show the conflict
    CONFIRMED = "confirmed"  # a targeted run made it manifest


class FindingKind(StrEnum):
    ARTIFACT = "artifact"
    METADATA = "metadata"  # an artifact whose variants differ only in metadata (timestamps, order, modes, owners)
    FAILURE = "failure"
    CULPRIT = "culprit"
    HAZARD = "hazard"


class FindingStatus(StrEnum):
    NEW = "new"  # first seen, or back after a fix
    STILL = "still"
    FIXED = "fixed"  # by this campaign


class WriterProcess(Model):
    """The smallest process that wrote a culprit's differing bytes, inside the step the
    culprit's `command` names (fuzzer/trace/writers.py)."""

    command: str
    argv: list[str]
    cwd: str
    identity: str  # the same in every run: command, cwd, which of the step's processes it is; no pid
    wrote: list[str]  # the files whose bytes it produced (a copy's source, e.g. under /tmp)
    replayed: bool  # the culprit's replays ran this process alone, not the whole step
    not_replayable: str = ""  # why smaller processes could not be replayed alone, when some could not


class Culprit(Model):
    """A build step that introduced a difference, its kind, and what stabilises it."""

    command: str
    argv: list[str]
    cwd: str
    outputs: list[str]
    kind: Kind
    axis: str | None = None
    stabilized_by: list[str] = []  # a minimal set, fixed together
    evidence: str = ""
    chain: list[str] = []  # artifact → … → this step's output
    writer: list[str] = []  # leaf process that wrote the output
    other_step: str | None = None  # the concurrent step, for races
    stabilizer_alternatives: list[list[str]] = []  # other minimal sets that work too
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign
    writer_process: WriterProcess | None = None  # the process that wrote the bytes, when the trace names one
    fix: str = ""  # `buildfuzz fix`: the path of its patch (fuzzer/fix/)
    fix_status: str = ""  # `buildfuzz fix`: proven: counts | suggested, not proven: why | no patch: why


class Hazard(Model):
    """One file's unordered conflicts of one type between two steps (fuzzer/trace/hazards.py).

    `writer` went first in the conflict, `reader` second: the writer and the reader
    (read-before-write), the two writers (write-write), the step and itself
    (duplicate-execution), the step creating the directory and the step writing into it
    (mkdir-race), the step creating the file and the step listing its directory (listing-race)."""

    type: HazardType
    file: str
    reader: str
    writer: str
    detail: str = ""  # what happened, in one traced run
    evidence: str = ""  # why the two steps were not ordered
    steps: list[str] = []  # every step involved in this file's conflicts
    status: HazardStatus = HazardStatus.LATENT
    reproduce: str = ""  # for a confirmed hazard: the replay command that makes it manifest
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign
    files: list[str] = []  # every file it covers (a recipe run several times at once: all it wrote)
    runs: list[str] = []  # the distinct runs its evidence rests on
    fix: str = ""  # `buildfuzz fix`: the path of its patch (fuzzer/fix/)
    fix_status: str = ""  # `buildfuzz fix`: proven: counts | suggested, not proven: why | no patch: why


# a count of builds with its exact interval (fuzzer/rates.py), or {} where none applies
RATE_SCHEMA = {
    "properties": {"seen": {"type": "integer"}, "builds": {"type": "integer"}, "low": {"type": "number"},
                   "high": {"type": "number"}, "confidence": {"type": "number"}, "method": {"type": "string"},
                   "text": {"type": "string"}, "campaigns": {"type": "integer"},
                   "upper_bound": {"type": ["number", "null"]}},
    "dependentRequired": {"seen": ["builds", "low", "high", "confidence", "method", "text"]},
}
Rate = Annotated[dict, msgspec.Meta(extra_json_schema=RATE_SCHEMA)]


class Finding(Model):
    """One thing found, under an id that stays the same across campaigns (fuzzer/findings.py)."""

    id: str  # a short hash of what it is: never of timings or run numbers
    kind: FindingKind
    what: str
    status: FindingStatus
    first_campaign: int
    first_seen: str  # ISO 8601, UTC
    last_campaign: int
    last_seen: str
    known: bool = False  # in the --baseline or accepted in the store: it does not fail CI
    rate: Rate = {}  # this campaign's k of n builds with its interval (fuzzer/rates.py); {} for hazards
    pooled: Rate = {}  # the same, summed over every campaign that counted it, with "campaigns"


def available_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity), in order."""
    return tuple(sorted(os.sched_getaffinity(0)))
