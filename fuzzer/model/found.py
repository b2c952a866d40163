"""What a campaign finds: a `Culprit` (with its `WriterProcess`), a `Hazard` and a `Finding`,
on the `Model` every type of the report shares. They are frozen msgspec Structs: the JSON
report is their encoding, its JSON Schema is generated from them (`fuzzer/report/schema.py`),
and a stored report decodes back into them, refusing keys they do not know.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from fuzzer.model.vocabulary import (FindingKind, FindingStatus, HazardStatus, HazardType, Kind, LineCause, LineStatus,
                                     Unfinished)


class Model(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What every type of the report shares: immutable, and a stored report with a key it
    does not know is refused, not silently dropped."""


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


class SourceLine(Model):
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
    steps: list[str] = []  # one cause, several steps: every step that shares this culprit's hazard
    # (seven compiles missing one directory), `command` the first of them; empty for one step
    finding_id: str = ""  # its id in `Report.findings`, the same in every campaign
    writer_process: WriterProcess | None = None  # the process that wrote the bytes, when the trace names one
    fix: str = ""  # `buildfuzz fix`: the path of its patch (fuzzer/fix/)
    fix_status: str = ""  # `buildfuzz fix`: proven: counts | suggested, not proven: why | no patch: why
    # what the localization budget cut short before the claim was complete (None: nothing), and
    # about how long completing it takes, serially, from its step's measured replay time
    unfinished: Unfinished | None = None
    unfinished_s: float = 0.0
    line: SourceLine | None = None  # an intrinsic culprit's first divergent source line (Python steps)


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
    missing_edge: str = ""  # the prerequisite the declared graph lacks: `bpf.o: config.h`, `obj/x.o: | obj`
    rule: str = ""  # where the rule lacking it is: `Makefile:22` (its rule line, from make's database)
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
