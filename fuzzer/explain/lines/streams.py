"""The line tracer's streams (injected/sitecustomize.py), read and compared: where two
replays of one Python process first part, and the iteration or call that caused it.

The first event that differs in anything (a value a loop took included) is where the
replays part. When it is a loop's value or a source's result at the same place in both,
that is the cause (an ordered loop's, a list's, only when no unordered source came before:
its order came from one). When it is control flow alone (the values before it all read the same
once addresses are normalised: objects made in the same order), the cause is walked back
to: the nearest earlier iteration over an unordered source (a set, a dict, a listing) or
call to a source of nondeterminism, said as such (`differed` False).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

LINE, ITERATION, SOURCE_CALL = "L", "I", "S"
UNORDERED = ("set", "frozenset", "dict", "dict_keys", "dict_values", "dict_items")


class Source(msgspec.Struct, frozen=True, array_like=True):
    """What a loop iterated (or which call a source event is), as the tracer saw it."""

    container: str | None  # the iterated object's type; None when not seen (a call's result)
    elements: list[str]  # its elements' types, in the order met
    hashed_by: str  # what their hash follows: str, address, own, value, builtin (joined by +)
    made_by: str  # the source call that made it (`os.listdir`), or the call itself for a source event
    text: str  # the iterated expression, or the call
    # a set of objects: each attribute its elements all carry with distinct str (or int) values,
    # with a digest of those values sorted (equal in two replays: a key that follows no address)
    keys: list[tuple[str, str]] = []


class Event(msgspec.Struct, frozen=True, array_like=True):
    kind: str  # LINE, ITERATION or SOURCE_CALL
    file: int  # index into Stream.files
    line: int
    function: str
    value: str = ""
    source: Source | None = None
    index: int = 0  # which iteration of its loop (1-based)


class Stream(msgspec.Struct, frozen=True):
    python: str
    mode: str  # settrace or sys.monitoring
    stopped: str  # why tracing stopped early ("" when it ran to the end)
    seconds: float
    max_events: int
    files: list[str]
    events: list[Event]


class Parting(msgspec.Struct, frozen=True):
    """Where two streams part: `cause` and `surfaced` index both streams (equal before them)."""

    cause: int | None  # the iteration or call walked back to; None when none precedes a control-flow parting
    surfaced: int  # the first event where control flow differs (the length of both when it never does)
    differed: bool  # the cause's values differ; False: walked back from a control-flow parting


def read(path: Path) -> Stream:
    return msgspec.json.decode(path.read_bytes(), type=Stream)


def flow_key(stream: Stream, event: Event) -> tuple[str, str, int, str, int]:
    """What control flow is: which line ran, which loop element or source call came next."""
    return event.kind, stream.files[event.file], event.line, event.function, event.index


def value_key(event: Event) -> tuple[str, tuple[str | None, str] | None]:
    source = event.source
    return event.value, (source.container, source.made_by) if source else None


def parting(a: Stream, b: Stream) -> Parting | None:
    """None when the streams do not part (as far as both go: a stopped stream is a prefix)."""
    common = min(len(a.events), len(b.events))
    first = next((i for i in range(common) if flow_key(a, a.events[i]) != flow_key(b, b.events[i])
                  or value_key(a.events[i]) != value_key(b.events[i])), None)
    if first is None:
        ran_out = len(a.events) != len(b.events) and not (a.stopped or b.stopped)
        return Parting(_walked_back(a, common), common, False) if ran_out else None
    surfaced = next((i for i in range(first, common) if flow_key(a, a.events[i]) != flow_key(b, b.events[i])), common)
    if surfaced == first or a.events[first].kind not in (ITERATION, SOURCE_CALL):
        return Parting(_walked_back(a, first), surfaced, False)
    if unordered(a.events[first]):
        return Parting(first, surfaced, True)
    # an ordered loop took other values: their order came from an unordered source before it, if one was seen
    back = _walked_back(a, first)
    return Parting(first, surfaced, True) if back is None else Parting(back, surfaced, False)


def _walked_back(stream: Stream, before: int) -> int | None:
    """The nearest unordered source before `before`; for a loop, the first iteration of that
    run of it (no one element of it read differently: the loop is the cause, not its last turn)."""
    found = next((i for i in range(before - 1, -1, -1) if unordered(stream.events[i])), None)
    if found is None or stream.events[found].kind != ITERATION:
        return found
    last = stream.events[found]
    return next((i for i in range(found, -1, -1) if _same_loop(stream.events[i], last) and stream.events[i].index == 1),
                found)


def _same_loop(event: Event, other: Event) -> bool:
    return (event.kind, event.file, event.line, event.function) == (other.kind, other.file, other.line, other.function)


def unordered(event: Event) -> bool:
    """An iteration over a source whose order is not the program's, or a call to a source."""
    if event.kind == SOURCE_CALL:
        return True
    source = event.source
    return event.kind == ITERATION and source is not None and (source.container in UNORDERED or bool(source.made_by))


def place(stream: Stream, event: Event) -> str:
    return f"{Path(stream.files[event.file]).name}:{event.line} in {event.function}"
