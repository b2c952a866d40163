"""The domain's words, defined once: what a campaign concludes (`Verdict`), how the command
line exits (`ExitCode`), why a campaign stopped (`ExitReason`), how a build ended
(`RunStatus`), why a run is in the plan (`Reason`) and why it was made (`RunKind`), the
stabilisers localization tries (`Stabilizer`), what the step audit made of a step
(`AuditResult`), the kind of cause a culprit is (`Kind`), the types and statuses of
hazards and findings, what became of a fix (`FixStatus`) and where a setting came from
(`SettingSource`). The enums whose values
reach JSON are str-valued, so a member is written as its string and compares equal to it
(docs/contracts.md).
"""

from __future__ import annotations

import enum
from enum import IntEnum, StrEnum


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


class Basis(StrEnum):
    """What an unreproducible verdict rests on: the JSON report's `basis`, so a CI gate can tell
    a failure of plain builds from one that shows only when buildfuzz held a step back or
    shuffled make's order (fuzzer/report/counts.py)."""

    NONE = ""  # no unreproducible verdict (or a report an earlier buildfuzz stored)
    PLAIN = "plain"  # some build with neither a held step nor a shuffled order failed or differed
    HELD_OR_SHUFFLED = "held-or-shuffled"  # only builds that held a step back or shuffled make's order did


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


class Unfinished(StrEnum):
    """What the localization budget cut short before a culprit's claim was complete: the
    JSON report's culprit `unfinished` (fuzzer/explain/classify.py)."""

    STABILISER_SEARCH = "stabiliser-search"  # it varies alone; no stabiliser set was confirmed in time
    REPLAYS = "replays"  # never replayed alone: its first replays did not fit, so no kind
    AXIS_TRIALS = "axis-trials"  # stable alone; its CPU set and job count were not varied, so no kind
    METADATA_TRIALS = "metadata-trials"  # stable alone; its inputs' metadata was not moved, so no kind


class LineCause(StrEnum):
    """Why a Python generator's first divergent line varies, as its tracer saw it: the
    JSON report's culprit `line.cause` (fuzzer/explain/lines/causes.py)."""

    SET_OF_STR = "set-of-str"  # iterates a set whose elements hash by their strings: the hash seed
    SET_BY_ADDRESS = "set-by-address"  # a set of objects hashed by object.__hash__ or an id() of theirs: addresses
    SET = "set"  # a set of elements with a hash of their own
    DICT_ORDER = "dict-order"  # a dict whose insertion order an unordered iteration set
    DIRECTORY_ORDER = "directory-order"  # os.listdir, os.scandir, glob: the directory's order
    RANDOM = "random"  # random without a fixed seed
    CLOCK = "clock"  # time.time and its kin
    UUID = "uuid"  # uuid4 / uuid1
    ID_OR_HASH = "id-or-hash"  # id() or hash() used as data
    TEMPFILE = "tempfile"  # tempfile's random names
    UNKNOWN = "unknown"  # the runs part there; no known source of nondeterminism was seen


class LineStatus(StrEnum):
    """How the line search ended: the JSON report's culprit `line.status`."""

    FOUND = "found"  # the replays part at a line of the generator's code
    NOT_FOUND = "not-found"  # traced replays were compared and named no line (the note says why)
    SKIPPED = "skipped"  # no traced replay ran: not a Python program, an isolated interpreter, the budget


class NotTried(StrEnum):
    """Why no run varied an axis: the JSON report's scope `not_tried`."""

    TRIED = ""  # some run did
    NOT_ASKED = "not-asked"  # not in --axes / --vary
    UNAVAILABLE = "unavailable"  # its tool is missing here (`problem` says which)
    RUNS_ENDED = "runs-ended"  # asked, but --runs or the budget ended before a run drew it
    NO_TARGET = "no-target"  # held runs target the traces' hazards: there was none to hold
    NO_READER = "no-reader"  # the traced build ran none of the programs that read it (shuffle: no make ran)


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


class NoStep(StrEnum):
    """Why localization named no step for a file the runs differed in: the JSON report's
    `unnamed` entries' `why`."""

    TRACED_RERUN_FAILED = "traced-rerun-failed"  # the traced rerun that diverged failed before it built the file
    NOT_IN_TRACED_RERUN = "not-in-traced-rerun"  # the traced rerun that diverged did not differ in it
    NOT_REPRODUCED = "not-reproduced"  # no traced rerun diverged


class Kind(StrEnum):
    """The kind of cause a culprit is (docs/contracts.md: `kind`)."""

    INTRINSIC = "intrinsic"  # varies replayed alone on identical inputs
    RACE = "race"  # its inputs or shared state depend on an unordered step
    ORDER = "order"  # follows the order or timing in which its inputs appeared
    PARALLELISM_LEVEL = "parallelism-level"  # follows the CPU set or -j
    BUILD_PATH = "build-path"  # records the directory it ran in, which differed between the runs
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


class FixStatus(StrEnum):
    """What became of a culprit's or hazard's fix: the JSON report's `remedy.status`."""

    SUGGESTED = "suggested"  # the campaign wrote it without rebuilding: not proven; `buildfuzz fix` proves it
    PROVEN = "proven"  # `buildfuzz fix`: the finding reproduced before the patch and never after
    NOT_PROVEN = "not-proven"  # `buildfuzz fix` tried and could not prove it (`why`)
    NONE = "none"  # neither a patch nor a remedy is known here (`why`)


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


class SettingSource(StrEnum):
    """Where a setting of `buildfuzz run` came from (fuzzer/settings.py): the JSON report's
    settings' `source`, the first of these that sets it."""

    COMMAND_LINE = "command line"
    ENVIRONMENT = "environment"  # a BUILDFUZZ_* variable
    FILE = "file"  # the source tree's settings file
    DEFAULT = "default"


class Reason(enum.Enum):
    """Why a run is in the plan (the JSON report's `runs[].reason`)."""

    REFERENCE = "reference"  # run 0: every other run is compared with it
    EXTREME = "extreme"  # an extreme of the schedule, or of an order or environment axis
    SAMPLE = "sample"  # a seeded random point
    REMEMBERED = "remembered"  # diverged or failed in an earlier campaign (fuzzer.memory)
    TARGET = "target"  # holds one traced step back (fuzzer.guided)
    CONTROL = "control"  # the targets' settings without a hold: may repeat an earlier run on purpose
    REPEAT = "repeat"  # the space has fewer distinct points than --runs: the same settings again


class RunKind(enum.Enum):
    EXPLORE = "explore"  # the campaign's schedule; the only runs compared for the verdict
    TRACE = "trace"  # a divergent perturbation rerun under strace
    TRACE_REFERENCE = "trace-reference"  # the reference rerun under strace; its tree serves step replays
    HAZARD_SCAN = "hazard-scan"  # a traced parallel run of a reproducible build
    SHRINK = "shrink"  # ablation trials for a minimal reproducer
    REPLAY = "replay"  # `buildfuzz replay`
    METADATA = "metadata"  # builds testing a metadata-only artifact's stabiliser (explain/artifact_metadata.py)
