"""The processes below a wrapper that made the bytes it delivered.

A wrapper (a pip or `python -m build` backend hook, setuptools' build_ext, a script) often
makes none of the bytes it writes: it copies a library the link under it wrote, from an
object a compile under it wrote, in a directory it (or its frontend) made. Followed back by
content (`fuzzer.trace.writers.content_source`: renames, links and copies) and then over
what each producing process read, the bytes of a step's output lead to every process that
produced some of them: the linker, the assembler, the compiler proper.

Those leaf processes are grouped into the units a user would name: a leaf's ancestor that
is a child of the leaves' lowest common ancestor (`gcc -c speed.c` for its cc1 and as,
`gcc -shared` for its collect2 and ld, when a hook ran both; a lone compile's cc1 and as
themselves). The step's root, the wrapper, is never a unit: the search is below it.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.trace.process_model import Process
from fuzzer.trace.steps import BuildTrace, Step
from fuzzer.trace.lineage import ancestry, lowest_common
from fuzzer.trace.writers import Source, content_source

MAX_SOURCES = 256  # files followed upstream inside one step


@dataclass(frozen=True)
class Producer:
    """One unit below the wrapper and the file on the output's chain its subtree produced."""

    process: Process
    wrote: str  # as the trace names it (`/tmp/build-via-sdist-k3j9/speed.o`)


def producers(trace: BuildTrace, step: Step, sources: list[Source]) -> tuple[Producer, ...]:
    """The units of `step` below its root (the wrapper) that produced the bytes `sources`
    lead to (`fuzzer.trace.writers.byte_sources`), downstream first: each unit's file was
    read by the units before it, or is the output's own."""
    wrapper = step.members[0]
    leaves = _leaves(trace, step, sources, wrapper)
    if not leaves:
        return ()
    common = lowest_common(trace, [s.process.index for s in leaves])
    found: dict[int, str] = {}
    for source in leaves:
        found.setdefault(_child_towards(trace, source.process.index, common), source.path)
    return tuple(Producer(trace.processes[i], path) for i, path in found.items() if i != wrapper)


def _leaves(trace: BuildTrace, step: Step, sources: list[Source], wrapper: int) -> list[Source]:
    """Every process of `step` whose writes the output's bytes lead back to, through what
    each one read, in the order found (downstream first); not the wrapper's own."""
    mine, queue, leaves = set(step.members), list(sources), []
    seen: set[str] = set()
    while queue and len(seen) < MAX_SOURCES:
        source = queue.pop(0)
        if source.path in seen or source.process.index not in mine:
            continue
        seen.add(source.path)
        if source.process.index != wrapper:
            leaves.append(source)
        for access in source.process.accesses:
            if access.kind == "read" and access.path != source.path:
                upstream = content_source(trace, access.path)
                if upstream is not None and upstream.time <= access.time:
                    queue.append(upstream)
    return leaves


def _child_towards(trace: BuildTrace, leaf: int, common: int | None) -> int:
    """The ancestor of `leaf` just below `common`; `leaf` when it is `common` or a child of it."""
    chain = ancestry(trace, leaf)
    if common not in chain or chain.index(common) <= 1:
        return leaf
    return chain[chain.index(common) - 1]

