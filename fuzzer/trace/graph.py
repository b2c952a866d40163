"""Provenance reasoning over traced builds: the root divergent steps (hazards are in
`fuzzer.trace.hazards`).

Only workspace files count (relative paths); absolute paths are toolchain files or
temporaries private to one step.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

from fuzzer.trace.differences import (
    CO_WRITER,
    EXISTENCE,
    ONE_RUN,
    RACE_EVIDENCE,
    READ_ORDER,
    WRITER_TIMING,
    InputDifference,
    input_differences,
    since,
    workspace_inputs,
)
from fuzzer.trace.steps import BuildTrace, Step, StepKey
from fuzzer.trace.writers import copied_input, delivered_from

__all__ = [  # the evidence vocabulary is re-exported: callers need only this module
    "CO_WRITER",
    "EXISTENCE",
    "ONE_RUN",
    "RACE_EVIDENCE",
    "READ_ORDER",
    "WRITER_TIMING",
    "InputDifference",
    "RootCandidate",
    "find_roots",
]

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
    # later steps that read its differing output and rewrote it, after it in both runs (ranlib
    # after `ar`, strip after the link), as the reference ran them: replays run them after it
    rewriters: tuple[Step, ...] = ()

    @property
    def step(self) -> Step:
        return self.div or self.ref  # type: ignore[return-value]  # a candidate has a step in one run at least

    @property
    def command(self) -> str:
        return self.step.command

    @property
    def replayed(self) -> Step:
        """The step its replays run: the reference's, whose tree replays run in, else the
        divergent run's."""
        step = self.ref or self.div
        assert step is not None  # a candidate has a step in one run at least
        return step

    @property
    def duration(self) -> float:
        """About what one replay of it costs: the traced run time of the step replayed."""
        step = self.replayed
        return max(step.end - step.start, 0.0) + sum(max(s.end - s.start, 0.0) for s in self.rewriters)


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


def find_roots(
    ref: BuildTrace, div: BuildTrace, differing: set[str], identical: Set[str] = frozenset()
) -> list[RootCandidate]:
    """Steps that introduced the divergence, most likely first.

    From each differing file go to its writer; a writer one of whose inputs also differs
    (and was written by another step) is a consequence, so continue upstream. A file it
    copied is followed unless it is known `identical` in both builds: what is not compared
    (a temporary wheel) may differ unseen.
    """
    found: dict[StepKey, _Candidate] = {}
    ways = _trace_back(ref, div, differing, identical, found)
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
    ref: BuildTrace, div: BuildTrace, differing: set[str], identical: Set[str], found: dict[StepKey, _Candidate]
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
                upstream[path] = _upstream(ref, div, differing, identical, path)
                stack.extend(g for _, _, inputs in upstream[path] for g in inputs if g not in upstream)
                continue
            stack.pop()
            ways[path] = _ways(upstream[path], ways, found)
    return ways


def _upstream(
    ref: BuildTrace, div: BuildTrace, differing: set[str], identical: Set[str], path: str
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
        copied = copied_input(div, d, path) if d else copied_input(ref, r, path)  # type: ignore[arg-type]  # a pair has one
        if copied and copied not in identical:  # a copy differs because what it copied did
            inputs.append(copied)
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
    """The file's writers as (ref step, div step); from ref when nothing wrote it in div. A
    step that only rewrote what an earlier one wrote (`rewrites`) carries its difference on:
    the earlier one stands for it."""
    later = rewrites(ref, path) & rewrites(div, path)
    if div.writers(path):
        return [(ref.step(d.key), d) for d in div.writers(path) if d.key not in later]
    if ref.writers(path):
        return [(r, div.step(r.key)) for r in ref.writers(path) if r.key not in later]
    # written by no step: a driver copied it from a step's file (pip's wheel from /tmp)
    source = delivered_from(div, path)
    return [(ref.step(d.key), d) for d in div.writers(source)] if source else []


def rewrites(trace: BuildTrace, path: str) -> frozenset[StepKey]:
    """The steps that rewrote a file an earlier step wrote, in sequence: each started after
    every earlier writer of it had ended, read the file first and succeeded (`ranlib` after
    `ar`, a line of the same recipe). Seen so in both runs, they are no race."""
    writers = sorted(trace.writers(path), key=lambda s: s.start)
    return frozenset(w.key for i, w in enumerate(writers)
                     if i and not w.failed and path in w.inputs and all(e.end <= w.start for e in writers[:i]))


def _add_co_writers(ref: BuildTrace, div: BuildTrace, differing: set[str], found: dict[StepKey, _Candidate]) -> None:
    """Two steps writing one differing file: both are candidates, each naming the other
    (as seen in the divergent run, or else in the reference run). A step rewriting, in both
    runs, what an earlier one wrote is no other writer: it followed it."""
    for path in sorted(differing):
        later = rewrites(ref, path) & rewrites(div, path)
        trace, run = (div, "divergent") if len(div.writers(path)) > 1 else (ref, "reference")
        writers = [w for w in trace.writers(path) if w.key not in later]
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
    outputs = written & differing
    return RootCandidate(
        ref=c.ref,
        div=c.div,
        outputs=tuple(sorted(outputs)),
        explains=tuple(sorted(c.explains)),
        input_differences=tuple(c.co_writers + differences),
        chain=c.chain,
        failed=c.failed,
        rewriters=_rewriters_of(ref, div, c, outputs),
    )


def _rewriters_of(ref: BuildTrace, div: BuildTrace, c: _Candidate, outputs: set[str]) -> tuple[Step, ...]:
    """The reference's steps that rewrote the candidate's differing outputs after it, in both
    runs, in the order they started."""
    if c.ref is None or c.div is None:
        return ()
    keys = {k for p in outputs for k in rewrites(ref, p) & rewrites(div, p)}
    return tuple(sorted((s for k in keys if (s := ref.step(k)) is not None and s.start >= c.ref.end),
                        key=lambda s: s.start))


def _rank(root: RootCandidate, ref: BuildTrace, div: BuildTrace) -> tuple:
    race = any(d.how in RACE_EVIDENCE for d in root.input_differences)
    start = root.div.start - div.start if root.div else root.ref.start - ref.start  # type: ignore[union-attr]  # ref, if no div
    return (-len(root.explains), not race, not root.failed, start, root.command)
