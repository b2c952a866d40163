"""One cause, one finding: race culprits that each missed what one hazard's writer makes,
or that are lines of one recipe running several times at once.

Seven compiles that write into `build/object/`, which a phony `dirs` step creates and
none of them waits for, are seven roots of a failed build, and seven culprits with one
other party, one missing edge and one fix. They are reported as one culprit listing its
steps (`Culprit.steps`), in the place of the most likely of them. So is one such culprit
alone (one compile failed, or only a failed run's log names one) when its hazard lists
the others: the same finding, whichever of them showed.

A recipe that ran twice at once (a generator writing temporaries, `mv` lines putting them
in place, a compile, an `ar`) gives a race culprit per line whose output differs. They
are one culprit too, named by the line farthest upstream of what differs (the longest
chain: the one that wrote the bytes the others carried on, never the `ar` at the end).

And one step found twice (two roots, two runs) is one culprit, the stronger evidence's.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec import structs

from fuzzer.model import Culprit, Hazard, Kind
from fuzzer.trace.hazards import DUPLICATE, MKDIR_RACE, READ_BEFORE_WRITE

# When one step is found twice, the stronger evidence wins: a kind drawn from the traces
# or from replays beats "unknown".
STRENGTH = {Kind.RACE: 0, Kind.INTRINSIC: 1, Kind.PARALLELISM_LEVEL: 2, Kind.ORDER: 3, Kind.BUILD_PATH: 4, Kind.UNKNOWN: 5}


def one_per_hazard(culprits: Iterable[Culprit], hazards: Iterable[Hazard]) -> list[Culprit]:
    """`culprits` (in report order) with those on the missing side of one read-before-write
    or mkdir hazard made one, listing every step of that side the hazard names; and those
    that are lines of one duplicated recipe, named by the one farthest upstream."""
    hazards = [h for h in hazards if h.type in (READ_BEFORE_WRITE, MKDIR_RACE, DUPLICATE)]
    out: list[Culprit] = []
    at: dict[tuple[str, str], int] = {}  # the hazard (type, file) → its culprit's place in `out`
    for culprit in culprits:
        hazard = _shared(culprit, hazards)
        key = (hazard.type, hazard.file) if hazard is not None else None
        if hazard is None or key is None or key not in at:
            if key is not None:
                at[key] = len(out)
            out.append(culprit)
            continue
        kept = out[at[key]]
        named = culprit if hazard.type == DUPLICATE and len(culprit.chain) > len(kept.chain) else kept
        out[at[key]] = structs.replace(named, steps=sorted({*(kept.steps or [kept.command]), culprit.command}),
                                       outputs=sorted({*kept.outputs, *culprit.outputs}))
    return [_listed(c, hazard) if (hazard := _shared(c, hazards)) is not None else c for c in out]


def _shared(culprit: Culprit, hazards: list[Hazard]) -> Hazard | None:
    """The hazard whose writer this race culprit missed, the culprit among its other steps;
    or the duplicated recipe it is a line of."""
    if culprit.kind != Kind.RACE:
        return None
    recipe = next((h for h in hazards if h.type == DUPLICATE and culprit.command in h.steps), None)
    if recipe is not None or culprit.other_step is None:
        return recipe
    return next((h for h in hazards if h.writer == culprit.other_step and culprit.command != h.writer
                 and culprit.command in h.steps), None)


def _listed(culprit: Culprit, hazard: Hazard) -> Culprit:
    """Every step on the culprit's side of the hazard (the traces may show more than failed:
    a duplicated recipe's side is all its lines); the culprit as it is where that side is
    the culprit alone."""
    side = hazard.steps if hazard.type == DUPLICATE else [s for s in hazard.steps if s != hazard.writer]
    steps = sorted({*(culprit.steps or [culprit.command]), *side})
    if len(steps) < 2:
        return culprit
    if hazard.type == DUPLICATE:
        said = (f"{len(steps)} steps share this cause, a recipe that ran several times at once, its lines and what "
                f"read its half-written files ({hazard.type}, writing {', '.join(hazard.files)}): one finding, one fix")
    else:
        edge = f"; the declared graph lacks `{hazard.missing_edge}`" if hazard.missing_edge else ""
        said = (f"{len(steps)} steps share this cause, each unordered with `{hazard.writer}` ({hazard.type} on "
                f"{hazard.file}{edge}): one finding, one fix")
    return structs.replace(culprit, steps=steps, evidence=f"{culprit.evidence}\n{said}")


def one_per_step(culprits: list[Culprit]) -> list[Culprit]:
    """A step found twice (two roots, two runs) is one culprit: the strongest evidence wins,
    and it keeps every differing output."""
    best: dict[tuple[str, str], Culprit] = {}
    for culprit in culprits:
        key = (culprit.command, culprit.cwd)
        kept = best.get(key)
        if kept is None:
            best[key] = culprit
            continue
        stronger, weaker = sorted((kept, culprit), key=lambda c: STRENGTH.get(c.kind, len(STRENGTH)))
        best[key] = structs.replace(stronger, outputs=sorted(set(stronger.outputs) | set(weaker.outputs)))
    return list(best.values())
