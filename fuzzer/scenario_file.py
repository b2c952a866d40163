"""What a scenario's `scenario.toml` may hold, as msgspec types: fuzzer.structs.read_table
checks a file against them, and each key's description is the message its author gets
when a value does not fit (`expect.kind must be one of intrinsic, ..., got 'cosmic'`)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from fuzzer import axes as axis_table
from fuzzer import model
from fuzzer.config import MAX_RUNS, MIN_SUCCESSFUL, max_jobs

KINDS = tuple(k.value for k in model.NAMED_KINDS)
CAUSES = tuple(c.value for c in model.LineCause)
VERDICTS = ("reproducible", "unreproducible")


# What each key of scenario.toml takes; the description is the author's message when it does not.
Text = Annotated[str, Meta(pattern=r"\A[^\x00]*[^\x00\s][^\x00]*\Z",  # a NUL cannot reach a command line or a file name
                           description="must be a non-empty string without NUL characters")]
Texts = Annotated[tuple[Text, ...], Meta(description='must be a list of non-empty strings, e.g. ["bin/x"]')]
Kind = Annotated[Literal[KINDS], Meta(description=f"must be one of {', '.join(KINDS)}")]
OneOrJoint = Annotated[  # a string: one stabiliser among the culprit's; a list: its exact joint set
    Text | Annotated[tuple[Text, ...], Meta(min_length=1)],
    Meta(description='must be a string or a non-empty list of strings, e.g. ["ASLR", "PYTHONHASHSEED"]')]
LineCause = Annotated[Literal[CAUSES], Meta(description=f"must be one of {', '.join(CAUSES)}")]
Flag = Annotated[bool, Meta(description="must be true or false")]


Table = Meta(description="must be a table ([section])")


def whole(lo: int, hi: int):
    return Annotated[int, Meta(ge=lo, le=hi, description=f"must be a whole number from {lo} to {hi}")]


Verdict = Annotated[Literal[VERDICTS], Meta(description=f"must be one of {', '.join(VERDICTS)}")]
Axis = Annotated[Literal["jobs", "cpus"], Meta(description="must be one of jobs, cpus")]
Hazards = whole(0, 1_000_000)
Runs = whole(MIN_SUCCESSFUL, MAX_RUNS)
JobRange = Annotated[tuple[whole(1, max_jobs()), whole(1, max_jobs())],
                     Meta(description=f"must be [LO, HI] with 1 <= LO <= HI <= {max_jobs()}")]
Vary = Annotated[tuple[Literal[axis_table.OPT_IN], ...], Meta(
    min_length=1, description=f"must be a list of axes among {', '.join(axis_table.OPT_IN)}, e.g. [\"buildpath\"]")]
Seconds = whole(1, 86_400)
Culprits = Annotated[tuple["ExpectedCulprit", ...], Meta(
    min_length=1, description='must be a list of tables, e.g. [{culprit = "gen.py", kind = "intrinsic"}]')]


class ExpectedCulprit(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    culprit: Text
    kind: Kind | None = None
    stabilized_by: OneOrJoint | None = None


class Expect(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    verdict: Verdict
    artifacts: Texts = ()
    culprit: Text | None = None
    kind: Kind | None = None
    axis: Axis | None = None
    stabilized_by: OneOrJoint | None = None  # one of the culprit's stabilisers, or its exact joint set
    hazards: Hazards | None = None  # at most this many
    failures: Flag | None = None
    writer: Text | None = None  # substring of the top culprit's writer process (inside its step)
    other_step: Text | None = None  # substring of the top culprit's other party (the step it raced)
    members: Texts = ()  # members that must be named as differing in content (a path or its tail)
    metadata_only: Texts = ()  # artifacts whose variants must differ only in metadata
    metadata_stabilized_by: Text | None = None  # what must make those metadata-only artifacts identical
    culprits: Culprits = ()  # every culprit, each with its kind and stabilisers; no other one
    missing_edge: Text | None = None  # substring of a hazard's missing prerequisite, which names its rule's line
    culprit_steps: Hazards | None = None  # the top culprit lists at least this many steps (one cause, one finding)
    line: Text | None = None  # substring of the top culprit's first divergent line: `gen.py:46 in Function.finalize`
    line_cause: LineCause | None = None  # that line's cause class: set-of-str, set-by-address, uuid, ...


class Run(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The [run] table: how the scenario's campaign runs (Scenario has the same fields)."""

    runs: Runs | None = None
    artifacts: Texts = ()
    ignore: Texts = ()
    jobs: JobRange | None = None
    count_bookkeeping: Flag = False  # build systems' bookkeeping decides the verdict too (a CMake configure's logs)
    default_ignore: Flag = True  # the older name: false is count_bookkeeping = true
    vary: Vary = ()  # environment axes added to the default ones, as with --vary
    localize_budget: Seconds | None = None
    check_steps: Text | None = None  # the step audit's share, read as --check-steps is when the campaign starts


class ScenarioFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    description: Text = ""
    command: Text
    expect: Annotated[Expect, Table]
    run: Annotated[Run, Table] = msgspec.field(default_factory=Run)
