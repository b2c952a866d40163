"""Why a line varies, from what the tracer saw there (never from names in the source): the
iterated object's type, its elements' types and what their hash follows (a set of `str`
follows the hash seed; of objects hashed by `object.__hash__`, or by a `__hash__` whose
code calls `id`, memory addresses), or which source call made the value (a listing,
uuid, random, the clock, tempfile, id/hash outside a `__hash__`). A `__hash__` that calls
both `id` and `hash` is decided by the replays: stabilised by the hash seed alone, its
order followed the hash of its fields."""

from __future__ import annotations

from msgspec import structs

from fuzzer.explain.lines.streams import ITERATION, Event, Parting, Source, Stream, place
from fuzzer.model import LineCause, LineStatus, SourceLine, Stabilizer

# the tracer's names of source calls (injected/sitecustomize.py's SOURCES), by their module
CALLS = {
    "os": LineCause.DIRECTORY_ORDER, "glob": LineCause.DIRECTORY_ORDER, "uuid": LineCause.UUID,
    "random": LineCause.RANDOM, "time": LineCause.CLOCK, "tempfile": LineCause.TEMPFILE,
    "id": LineCause.ID_OR_HASH, "hash": LineCause.ID_OR_HASH,
}
SETS = ("set", "frozenset")
DICTS = ("dict", "dict_keys", "dict_values", "dict_items")


def cause_of(event: Event, varied: tuple[str, ...] = ()) -> LineCause:
    """`varied`: the stabilisers the replays found, which decide between the bases a
    `__hash__` mixes (PeachPy's `hash(name) ^ id(self)`: fixed by the hash seed alone, the
    address part did not move the order)."""
    source = event.source
    if source is None:
        return LineCause.UNKNOWN
    if source.made_by:
        return CALLS.get(source.made_by.split(".")[0], LineCause.UNKNOWN)
    if event.kind != ITERATION:
        return LineCause.UNKNOWN
    if source.container in SETS:
        return _set_cause(source, varied)
    if source.container in DICTS:
        return LineCause.DICT_ORDER
    return LineCause.UNKNOWN


def _set_cause(source: Source, varied: tuple[str, ...]) -> LineCause:
    bases = set(source.hashed_by.split("+")) if source.hashed_by else set()
    seed_alone = Stabilizer.PYTHONHASHSEED in varied and Stabilizer.ASLR not in varied
    if "address" in bases and not (seed_alone and bases & {"str", "own"}):
        return LineCause.SET_BY_ADDRESS
    if "str" in bases or (seed_alone and "own" in bases):
        return LineCause.SET_OF_STR
    return LineCause.SET


def located(a: Stream, b: Stream, found: Parting, replays: list[str], budget_s: float,
            varied: tuple[str, ...] = ()) -> SourceLine:
    """The line `found` names in `a` and `b` (equal up to it), with the replays it rests on
    and the stabilisers they varied."""
    common = _common(a, b, replays, budget_s)
    if found.cause is None:
        event = a.events[found.surfaced] if found.surfaced < len(a.events) else None
        where = place(a, event) if event is not None else "the end of the shorter stream"
        why = (f"the replays part at {where}, and no iteration over an unordered source nor call to a source of "
               "nondeterminism came before it in the traced code")
        return structs.replace(common, note="; ".join(filter(None, (why, common.note))))
    event, other = a.events[found.cause], b.events[found.cause]
    source = event.source
    surfaced = a.events[found.surfaced] if found.surfaced < len(a.events) else None
    return structs.replace(
        common, status=LineStatus.FOUND, file=a.files[event.file], line=event.line, function=event.function,
        expression=source.text if source else "", cause=cause_of(event, varied),
        container=(source.container or "") if source else "", elements=list(source.elements) if source else [],
        hashed_by=source.hashed_by if source else "", element=event.index, values=[event.value, other.value],
        keys=_stable_keys(source, other.source),
        differed=found.differed,
        surfaced=place(a, surfaced) if surfaced is not None and found.surfaced != found.cause else "")


def _stable_keys(source: Source | None, other: Source | None) -> list[str]:
    """The keys both replays saw the elements carry with the same values."""
    theirs = set(other.keys) if other is not None else set()
    return [name for name, digest in (source.keys if source is not None else []) if (name, digest) in theirs]


def _common(a: Stream, b: Stream, replays: list[str], budget_s: float) -> SourceLine:
    stopped = "; ".join(f"replay {n}'s tracing stopped ({s.stopped}, {len(s.events)} events)"
                        for n, s in ((1, a), (2, b)) if s.stopped)
    return SourceLine(status=LineStatus.NOT_FOUND, replays=replays, tracer=f"{a.mode}, Python {a.python}",
                      budget_s=budget_s, seconds=[a.seconds, b.seconds], note=stopped)
