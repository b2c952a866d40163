"""Provenance reasoning over traced builds: latent hazards, and root divergent steps.

Only workspace files count (relative paths); absolute paths are toolchain files or
temporaries private to one step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import pairwise

from fuzzer.trace.differences import (
    CO_WRITER,
    EXISTENCE,
    ONE_RUN,
    RACE_EVIDENCE,
    READ_ORDER,
    WRITER_TIMING,
    InputDifference,
    in_workspace,
    input_differences,
    since,
    workspace_inputs,
)
from fuzzer.trace.steps import BuildTrace, Step, StepKey

__all__ = [  # the evidence vocabulary is re-exported: callers need only this module
    "CO_WRITER",
    "EXISTENCE",
    "ONE_RUN",
    "RACE_EVIDENCE",
    "READ_BEFORE_WRITE",
    "READ_ORDER",
    "WRITER_TIMING",
    "WRITE_WRITE",
    "Hazard",
    "InputDifference",
    "RootCandidate",
    "find_hazards",
    "find_roots",
]

WRITE_WRITE = "write-write"
READ_BEFORE_WRITE = "read-before-write"


@dataclass(frozen=True, slots=True)
class Hazard:
    """`first`/`second`: for read-before-write the writer and the reader; for
    write-write the two writers (sorted). `detail` is the evidence from one run."""

    type: str
    file: str
    first: str
    second: str
    detail: str = field(default="", compare=False)

    def to_json(self) -> dict:
        if self.type == READ_BEFORE_WRITE:
            return {
                "type": self.type,
                "file": self.file,
                "reader": self.second,
                "writer": self.first,
                "detail": self.detail,
            }
        return {
            "type": self.type,
            "file": self.file,
            "writer": self.first,
            "other_writer": self.second,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class RootCandidate:
    """A step that may have introduced the divergence, as seen in both runs."""

    ref: Step | None
    div: Step | None
    outputs: tuple[str, ...]  # differing files it wrote (in either run)
    explains: tuple[str, ...]  # differing files whose provenance leads here
    input_differences: tuple[InputDifference, ...]
    chain: tuple[str, ...]  # artifact → ... → this step's output
    failed: bool  # failed in the divergent run, not in the reference

    @property
    def step(self) -> Step:
        return self.div or self.ref  # type: ignore[return-value]

    @property
    def command(self) -> str:
        return self.step.command


# --- hazards --------------------------------------------------------------------------


def find_hazards(traces: list[BuildTrace]) -> list[Hazard]:
    """Rattle-style conflicts between steps, from any traced runs, deduplicated."""
    found: dict[Hazard, Hazard] = {}
    for run, trace in enumerate(traces):
        for hazard in [*_write_write(trace, run), *_read_before_write(trace, run), *_listed_before_write(trace, run)]:
            found.setdefault(hazard, hazard)
    return sorted(found.values(), key=lambda h: (h.type, h.file, h.first, h.second))


def _write_write(trace: BuildTrace, run: int) -> list[Hazard]:
    touched: dict[str, list[Step]] = {}
    for step in trace.steps:
        for path in step.writes.keys() | step.deletes.keys():
            if in_workspace(path):
                touched.setdefault(path, []).append(step)
    hazards = []
    for path, steps in touched.items():
        if len(steps) < 2 or not any(path in s.writes for s in steps):
            continue
        # consecutive pairs by command: every writer named, linear in their number
        ordered = sorted(steps, key=lambda s: (s.command, s.cwd, s.occurrence))
        for a, b in pairwise(ordered):
            # a step that runs a sub-build (cmake's try-compile) owns its inner steps' files
            nested = _encloses(trace, a, b) or _encloses(trace, b, a)
            if (path in a.writes or path in b.writes) and not nested:
                detail = f"run {run}: `{a.command}` and `{b.command}` both wrote it"
                hazards.append(Hazard(WRITE_WRITE, path, a.command, b.command, detail))
    return hazards


def _read_before_write(trace: BuildTrace, run: int) -> list[Hazard]:
    t0 = trace.start
    hazards = []
    for reader in trace.steps:
        for path in reader.inputs:
            if not in_workspace(path):
                continue
            for writer in trace.writers(path):
                if writer is reader or _ordered_after(trace, reader, writer, path):
                    continue
                detail = (
                    f"run {run}: `{reader.command}` started at +{reader.start - t0:.3f}s, "
                    f"before `{writer.command}` ended at +{writer.end - t0:.3f}s"
                )
                hazards.append(Hazard(READ_BEFORE_WRITE, path, writer.command, reader.command, detail))
    return hazards


def _listed_before_write(trace: BuildTrace, run: int) -> list[Hazard]:
    """A step listed a directory (a glob, `ls`, an archive of a directory) while a step not
    ordered before it was creating files there: what it saw depended on timing."""
    created: dict[str, list[tuple[str, Step]]] = {}
    for writer in trace.steps:
        for path in writer.writes:
            if in_workspace(path):
                created.setdefault(os.path.dirname(path) or ".", []).append((path, writer))
    t0 = trace.start
    hazards = []
    for reader in trace.steps:
        for directory, listed in reader.lists.items():
            for path, writer in created.get(directory, ()):
                if writer is reader or _ordered_after(trace, reader, writer, path, listed):
                    continue
                detail = (f"run {run}: `{reader.command}` listed {directory}/ at +{listed - t0:.3f}s, before "
                          f"`{writer.command}` (creating {path}) ended at +{writer.end - t0:.3f}s")
                hazards.append(Hazard(READ_BEFORE_WRITE, path, writer.command, reader.command, detail))
    return hazards


def _ordered_after(trace: BuildTrace, reader: Step, writer: Step, path: str, looked: float | None = None) -> bool:
    """Did the reader run after the writer was done? Nested steps (a step running a sub-make)
    are sequential inside, so for them the access times decide."""
    if reader.start >= writer.end:
        return True
    if _encloses(trace, reader, writer) or _encloses(trace, writer, reader):
        looked = reader.first_look(path) if looked is None else looked
        return looked >= writer.writes.get(path, writer.end)
    return False


def _encloses(trace: BuildTrace, outer: Step, inner: Step) -> bool:
    sid = inner.outer
    while sid is not None:
        if sid == outer.id:
            return True
        sid = trace.steps[sid].outer
    return False


# --- roots ----------------------------------------------------------------------------

# For one differing file: each root candidate its divergence traces back to, with the
# length of the longest way there and the next differing file upstream on it (None: the
# candidate wrote this very file).
Ways = dict[StepKey, tuple[int, str | None]]


@dataclass(slots=True)
class _Candidate:
    ref: Step | None
    div: Step | None
    explains: set[str] = field(default_factory=set)
    chain: tuple[str, ...] = ()
    co_writers: list[InputDifference] = field(default_factory=list)
    failed: bool = False


def find_roots(ref: BuildTrace, div: BuildTrace, differing: set[str]) -> list[RootCandidate]:
    """Steps that introduced the divergence, most likely first.

    From each differing file go to its writer; a writer one of whose inputs also differs
    (and was written by another step) is a consequence, so continue upstream.
    """
    found: dict[StepKey, _Candidate] = {}
    ways = _trace_back(ref, div, differing, found)
    longest: dict[StepKey, tuple[int, str]] = {}  # candidate → its farthest differing file
    for path in sorted(differing):
        for key, (length, _) in ways.get(path, {}).items():
            found[key].explains.add(path)
            if length > longest.get(key, (0, ""))[0]:
                longest[key] = (length, path)
    for key, (_, path) in longest.items():
        found[key].chain = _chain(ways, key, path)
    _add_co_writers(ref, div, differing, found)
    _add_failures(ref, div, found)
    roots = [_finish(ref, div, differing, c) for c in found.values()]
    return sorted(roots, key=lambda r: _rank(r, ref, div))


def _trace_back(
    ref: BuildTrace, div: BuildTrace, differing: set[str], found: dict[StepKey, _Candidate]
) -> dict[str, Ways]:
    """`Ways` for every differing file reachable, by an iterative depth-first walk
    (dependency chains can be deeper than Python's recursion limit), each file once."""
    ways: dict[str, Ways] = {}
    upstream: dict[str, list[tuple[Step | None, Step | None, list[str]]]] = {}
    for artifact in sorted(differing):
        stack = [artifact]
        while stack:
            path = stack[-1]
            if path in ways:
                stack.pop()
                continue
            if path not in upstream:  # first visit: walk its differing inputs first
                upstream[path] = _upstream(ref, div, differing, path)
                stack.extend(g for _, _, inputs in upstream[path] for g in inputs if g not in upstream)
                continue
            stack.pop()
            ways[path] = _ways(upstream[path], ways, found)
    return ways


def _upstream(
    ref: BuildTrace, div: BuildTrace, differing: set[str], path: str
) -> list[tuple[Step | None, Step | None, list[str]]]:
    """The file's writers (ref step, div step) with their differing inputs written by others."""
    result = []
    for r, d in _writer_pairs(ref, div, path):
        step = d or r
        inputs = [
            g
            for g in sorted(workspace_inputs(r, d))
            if g in differing and g != path and any(w.key != step.key for w in (*div.writers(g), *ref.writers(g)))
        ]
        result.append((r, d, inputs))
    return result


def _ways(
    writers: list[tuple[Step | None, Step | None, list[str]]],
    ways: dict[str, Ways],
    found: dict[StepKey, _Candidate],
) -> Ways:
    mine: Ways = {}
    for r, d, inputs in writers:
        step = d or r
        if not inputs:  # everything it read was the same: it is a root
            found.setdefault(step.key, _Candidate(r, d))
            mine[step.key] = (1, None)
        for g in inputs:  # an input still on the walk (a cycle) has no ways yet: skipped
            for key, (length, _) in ways.get(g, {}).items():
                if length + 1 > mine.get(key, (0, None))[0]:
                    mine[key] = (length + 1, g)
    return mine


def _chain(ways: dict[str, Ways], key: StepKey, artifact: str) -> tuple[str, ...]:
    chain = [artifact]
    while (hop := ways[chain[-1]][key][1]) is not None:
        chain.append(hop)
    return tuple(chain)


def _writer_pairs(ref: BuildTrace, div: BuildTrace, path: str) -> list[tuple[Step | None, Step | None]]:
    """The file's writers as (ref step, div step); from ref when nothing wrote it in div."""
    if div.writers(path):
        return [(ref.step(d.key), d) for d in div.writers(path)]
    return [(r, div.step(r.key)) for r in ref.writers(path)]


def _add_co_writers(ref: BuildTrace, div: BuildTrace, differing: set[str], found: dict[StepKey, _Candidate]) -> None:
    """Two steps writing one differing file: both are candidates, each naming the other
    (as seen in the divergent run, or else in the reference run)."""
    for path in sorted(differing):
        trace, run = (div, "divergent") if len(div.writers(path)) > 1 else (ref, "reference")
        writers = trace.writers(path)
        for step in writers if len(writers) > 1 else ():
            r, d = (ref.step(step.key), step) if trace is div else (step, div.step(step.key))
            candidate = found.setdefault(step.key, _Candidate(r, d))
            candidate.explains.add(path)
            candidate.chain = candidate.chain or (path,)
            for other in writers:
                if other is not step:
                    detail = f"`{other.command}` also wrote {path} in the {run} run"
                    candidate.co_writers.append(
                        InputDifference(
                            path, CO_WRITER, other.command, _written(ref, r, path), _written(div, d, path), detail
                        )
                    )


def _written(trace: BuildTrace, step: Step | None, path: str) -> float | None:
    return since(trace, step.writes.get(path)) if step else None


def _add_failures(ref: BuildTrace, div: BuildTrace, found: dict[StepKey, _Candidate]) -> None:
    """A step failing only in the divergent run is a root, unless a step it launched
    (through a nested make) failed first."""
    failed = [s for s in div.steps if s.failed]
    explained = {sid for s in failed for sid in _outer_ids(div, s)}
    for step in failed:
        match = ref.step(step.key)
        if step.id not in explained and (match is None or not match.failed):
            found.setdefault(step.key, _Candidate(match, step)).failed = True


def _outer_ids(trace: BuildTrace, step: Step) -> list[int]:
    ids, sid = [], step.outer
    while sid is not None:
        ids.append(sid)
        sid = trace.steps[sid].outer
    return ids


def _finish(ref: BuildTrace, div: BuildTrace, differing: set[str], c: _Candidate) -> RootCandidate:
    written = {p for s in (c.ref, c.div) if s is not None for p in s.writes}
    differences = input_differences(ref, div, c.ref, c.div) if c.ref and c.div else []
    return RootCandidate(
        ref=c.ref,
        div=c.div,
        outputs=tuple(sorted(written & differing)),
        explains=tuple(sorted(c.explains)),
        input_differences=tuple(c.co_writers + differences),
        chain=c.chain,
        failed=c.failed,
    )


def _rank(root: RootCandidate, ref: BuildTrace, div: BuildTrace) -> tuple:
    race = any(d.how in RACE_EVIDENCE for d in root.input_differences)
    start = root.div.start - div.start if root.div else root.ref.start - ref.start  # type: ignore[union-attr]
    return (-len(root.explains), not race, not root.failed, start, root.command)
