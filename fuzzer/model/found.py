"""What a campaign finds: a `Culprit` (with its `WriterProcess`), a `Hazard` (each with its
`Fix` and that fix's `Proof`) and a `Finding`, on the `Model` every type of the report
shares. They are frozen msgspec Structs: the JSON report is their encoding, its JSON Schema
is generated from them (`fuzzer/report/schema.py`), and a stored report decodes back into
them, refusing keys they do not know.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from fuzzer.model.vocabulary import (FindingKind, FindingStatus, FixStatus, HazardStatus, HazardType, Kind, LineCause, NoStep,
                                     LineStatus, Unfinished)


class Model(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What every type of the report shares: immutable, and a stored report with a key it
    does not know is refused, not silently dropped. Each subclass says `frozen=True` again,
    as msgspec inherits it: for the type checker, which does not know it is inherited."""


class WriterProcess(Model, frozen=True):
    """The smallest process that wrote a culprit's differing bytes, inside the step the
    culprit's `command` names (fuzzer/trace/writers.py); for kind build-path, the process
    below the wrapper that recorded the directory it ran in (fuzzer/explain/build_path.py)."""

    command: str
    argv: list[str]
    cwd: str
    identity: str  # the same in every run: command, cwd, which of the step's processes it is; no pid
    wrote: list[str]  # the files whose bytes it produced (a copy's source, e.g. under /tmp)
    replayed: bool  # the culprit's replays ran this process alone, not the whole step
    not_replayable: str = ""  # why smaller processes could not be replayed alone, when some could not
    # kind build-path (fuzzer/explain/build_path.py): the directory it ran in and recorded, its
    # random part as X's (`/tmp/build-via-sdist-XXXXXXXX`); the command that made the
    # directory; the Python build frontend that command is or runs under (pip, python -m build)
    recorded_dir: str = ""
    dir_made_by: str = ""
    frontend: str = ""
    # the remedy run by buildfuzz: "proven: ..." (the process run again in fresh directories,
    # with the flag added), "not proven: why", or "" (not tried: not a C compiler)
    remedy_status: str = ""


class Proof(Model, frozen=True):
    """`buildfuzz fix`'s rebuilds of the finding's schedule (fuzzer/fix/proof.py): `before`
    from the user's tree, then `after` of a patched copy, judged against its own reference."""

    settings: str  # the schedule rebuilt: the perturbation that showed the finding
    before: int
    reproduced: int  # of the `before` builds, those that failed or differed
    after: int = 0  # after-builds made: the first that still shows it ends them
    still: int = 0  # of those, the ones that still showed it (0 and `after` > 0: proven)
    bound: float | None = None  # proven: the rate the finding may still have, below this at 95%
    # where the patched copy was built: the user's tree's path, which its files name (a configured
    # tree), bound there in the builds' mount namespace; "" when it was built as the campaign built
    at: str = ""
    # every build that reproduced it before failed: after the patch only a failure showed it (a
    # file that differs, a clock stamp that differs in every build, is another finding's)
    by_failure: bool = False


class Fix(Model, frozen=True):
    """A culprit's or hazard's fix (fuzzer/fix/): a patch to the file that declares the step,
    or a remedy to make by hand; the campaign suggests it, `buildfuzz fix` proves it."""

    status: FixStatus
    summary: str = ""  # what the change does, one line
    patch: str = ""  # the patch's absolute path, in the store; "" when there is none
    file: str = ""  # the file it changes, relative to the source root
    by_hand: str = ""  # no patch: the remedy in words (`gzip -n`, an order-only prerequisite on the directory)
    why: str = ""  # not proven, or no patch: why
    upstream: str = ""  # the fix in the step's own code, where it is known
    untested: list[str] = []  # what this host could not try: "clock not tested: faketime is not installed"
    proof: Proof | None = None  # `buildfuzz fix`'s rebuilds, when it made any


class SourceLine(Model, frozen=True):
    """An intrinsic Python step's first divergent line and why (fuzzer/explain/lines/):
    where two traced replays in the conditions that varied first part, walked back to the
    iteration or call that caused it. What a patch stage needs: the file and line, the
    iterated expression, the cause's class and the elements' types."""

    status: LineStatus
    file: str = ""  # absolute, as the replayed interpreter named it
    line: int = 0
    function: str = ""  # its qualified name
    expression: str = ""  # what the loop iterated (`enumerate(self.unnamed_labels)`), or the call (`uuid.uuid4()`)
    cause: LineCause = LineCause.UNKNOWN
    container: str = ""  # the iterated object's type, as the tracer saw it (`set`); "" when it could not see it
    elements: list[str] = []  # its elements' types (`__main__.Label`)
    hashed_by: str = ""  # what their hash follows, from their types: str, address, own, value (joined by +)
    element: int = 0  # which iteration (1-based) took a different value
    values: list[str] = []  # each replay's value there, addresses normalised
    differed: bool = False  # the values differed at the line itself; False: they read the same, and the line
    # is the nearest unordered source before where the runs parted
    surfaced: str = ""  # where control flow first parted (`gen.py:52 in emit`), when later than the line
    replays: list[str] = []  # the traced replays compared: the conditions each ran in
    tracer: str = ""  # how it traced: `settrace, Python 3.11`
    budget_s: float = 0.0  # each traced replay's time budget
    seconds: list[float] = []  # what each traced replay took
    note: str = ""  # why no line (skipped, not found), or what limits the claim
    # a set of objects: the attributes its elements all carry with distinct str or int values, the
    # same values in both replays: a sort key that follows no address (fuzzer/fix/line.py takes the first)
    keys: list[str] = []
    fix: Fix | None = None  # the patch to this line (fuzzer/fix/line.py): suggested, or proven by `buildfuzz fix`


class KeyEvidence(Model, frozen=True):
    """The strongest single fact behind a culprit's kind, typed: what the cause block's one
    evidence line says (fuzzer/report/cause_block.py), where `Culprit.evidence` is the prose."""

    replays: int = 0  # intrinsic: the step replayed alone, with identical inputs, this many times
    distinct: int = 0  # ... giving this many distinct outputs
    file: str = ""  # race: the file the unordered step changed under it; order: the first read in another order
    run: int | None = None  # race, order: the build whose trace (or log) showed it, against the reference
    reference_order: list[str] = []  # order: the reads from the first that differs, as the reference made them
    run_order: list[str] = []  # ... and as `run` made them


class Culprit(Model, frozen=True):
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
    steps: list[str] = []  # one cause, several steps: every step that shares this culprit's hazard
    # (seven compiles missing one directory), `command` the first of them; empty for one step
    rule: str = ""  # where the rule that ran it is: `Makefile:22` (its rule line, from make's database); "" unknown
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign
    writer_process: WriterProcess | None = None  # the process that wrote the bytes, when the trace names one
    fix: str = ""  # the path of its patch (fuzzer/fix/): the campaign's suggestion, or `buildfuzz fix`'s
    fix_status: str = ""  # `remedy` in words: proven: counts | suggested, not proven: why | no patch: why
    remedy: Fix | None = None  # the fix, typed: suggested by the campaign, proven by `buildfuzz fix`
    # what the localization budget cut short before the claim was complete (None: nothing), and
    # about how long completing it takes, serially, from its step's measured replay time
    unfinished: Unfinished | None = None
    unfinished_s: float = 0.0
    line: SourceLine | None = None  # an intrinsic culprit's first divergent source line (Python steps)
    key: KeyEvidence | None = None  # the strongest fact for its kind, where the kind's finder typed one


class UnnamedFile(Model, frozen=True):
    """A file the campaign's runs differed in for which localization named no step, and why
    (fuzzer/explain/untraced.py): a differing file never leaves the report unexplained."""

    path: str
    runs: list[int]  # the campaign's runs (their indices) that differed from run 0 in it
    why: NoStep
    traced: str = ""  # the traced rerun it rests on, by label; "" when none diverged
    traced_run: int | None = None  # that rerun's number among the traced reruns (not a drawn run's index)
    exit_code: int | None = None  # a failed traced rerun's exit status
    failing: list[str] = []  # the targets a failed traced rerun's log says failed
    log: str = ""  # a failed traced rerun's build log


class Hazard(Model, frozen=True):
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
    runs: list[int] = []  # the campaign's runs (their indices) whose evidence shows it: the rate counts these
    traced: list[str] = []  # the traced runs its evidence rests on, by label ("traced reference")
    # the prerequisite the declared graph lacks: `bpf.o: config.h`, `obj/x.o: | obj`; every
    # target that lacks it, when several do (`bld/a bld/b: | bld`)
    missing_edge: str = ""
    rule: str = ""  # where the reader's rule lacking it is: `Makefile:22` (its rule line, from make's database)
    rules: list[str] = []  # every rule lacking it, the reader's first (one edge, several rules: one finding)
    fix: str = ""  # the path of its patch (fuzzer/fix/): the campaign's suggestion, or `buildfuzz fix`'s
    fix_status: str = ""  # `remedy` in words: proven: counts | suggested, not proven: why | no patch: why
    remedy: Fix | None = None  # the fix, typed: suggested by the campaign, proven by `buildfuzz fix`

    def rule_lines(self) -> str:
        """Where the rules lacking the missing edge are, for people: every one, else the reader's."""
        return ", ".join(self.rules) if self.rules else self.rule


# a count of builds with its exact interval (fuzzer/rates.py), or {} where none applies
RATE_SCHEMA = {
    "properties": {"seen": {"type": "integer"}, "builds": {"type": "integer"}, "low": {"type": "number"},
                   "high": {"type": "number"}, "confidence": {"type": "number"}, "method": {"type": "string"},
                   "text": {"type": "string"}, "campaigns": {"type": "integer"},
                   "shared": {"type": "integer"}, "upper_bound": {"type": ["number", "null"]}},
    "dependentRequired": {"seen": ["builds", "low", "high", "confidence", "method", "text"]},
}
Rate = Annotated[dict[str, Any], msgspec.Meta(extra_json_schema=RATE_SCHEMA)]  # Any: the values RATE_SCHEMA gives


class Finding(Model, frozen=True):
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
