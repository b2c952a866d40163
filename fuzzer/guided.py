"""Hazard-guided schedules: turn the conflicts of one traced parallel build into targeted
runs that try to reverse them.

Random timing rarely flips two steps whose windows are milliseconds apart (a compile
that starts 40 ms after the generator it forgot to depend on). The first run after the
reference is traced; each conflict it shows (a file one step writes and another reads,
writes or lists, a directory one creates and another fills) becomes a run that holds
the step that went first back at its start, long enough for the other to go first
(the `hold` axis). If the two steps are ordered by the build, the build simply waits
and nothing changes; if they are not, the race manifests: the build diverges or fails.
Conflicts seen overlapping come first, then near misses, closest first.

A divergence proves the hold caused it only against a control: the same settings
without any hold (one run, right after the first target) must match the reference, and the held
run must differ in the conflict's file or in what the step that went first wrote. Then
the conflict is reported as a **confirmed** hazard with its own replay command; a build
that differs anyway (an intrinsic generator, a race that needs no help) confirms nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fuzzer.execute import hold
from fuzzer.plan import Perturbation
from fuzzer.report.model import Hazard
from fuzzer.trace.hazards import DUPLICATE, LISTING_RACE, MKDIR_RACE, OVERLAP, WRITE_WRITE, conflicts
from fuzzer.trace.steps import BuildTrace, Step

MAX_TARGETS = 6  # targeted runs per campaign; each costs one build
MARGIN = 1.5  # hold this many times the gap to flip, plus SLACK: timings shift between runs
SLACK_S = 0.1


@dataclass(frozen=True)
class Target:
    """One targeted run: `held` waits `ms` so that `other` goes first on `file`."""

    perturbation: Perturbation
    type: str
    file: str
    held: str  # command of the step held back
    other: str  # command of the step it should let go first
    ms: int
    telling: tuple[str, ...]  # files whose change shows the flip: the conflict's, and what `other` wrote

    def describe(self) -> str:
        return f"holding `{self.held}` back {self.ms} ms so that `{self.other}` goes first on {self.file}"


def targets(trace: BuildTrace, base: Perturbation, limit: int = MAX_TARGETS) -> list[Target]:
    """Targeted perturbations (no jitter, `base`'s jobs and CPUs) from one trace, best first."""
    found: dict[str, tuple[tuple, Target]] = {}
    for conflict in conflicts(trace):
        if conflict.type == DUPLICATE:
            continue  # both runs share one argv: holding one holds the other
        first, second, wait = _order(conflict)
        if first.argv == second.argv:
            continue
        ms = int((wait * MARGIN + SLACK_S) * 1000)
        value, key = hold.value(first.argv, ms), hold.argv_hash(first.argv)
        telling = tuple(sorted({conflict.file.rstrip("/"), *second.writes}))
        target = Target(control(base).with_variation("hold", value), conflict.type, conflict.file, first.command,
                        second.command, ms, telling)
        rank = (conflict.relation != OVERLAP, max(0.0, second.start - first.end), conflict.file)
        if key not in found or rank < found[key][0]:  # one run per step held back
            found[key] = (rank, target)
    return [t for _, t in sorted(found.values(), key=lambda item: item[0])][:limit]


def control(base: Perturbation) -> Perturbation:
    """The targets' settings without a hold: no jitter, so only the hold differs."""
    return Perturbation(base.jobs, base.cpus)


def _order(conflict) -> tuple[Step, Step, float]:
    """(the step that went first, the other, how long to hold the first back)."""
    a, b = conflict.first, conflict.second
    if conflict.type == WRITE_WRITE:
        a, b = sorted((a, b), key=lambda s: s.writes.get(conflict.file, s.end))
        return a, b, _after(b.writes.get(conflict.file, b.end), a)
    if conflict.type == MKDIR_RACE:  # first = the step creating the directory
        return a, b, _after(b.start, a)
    if conflict.type == LISTING_RACE:  # first = the creator, second = the lister
        listed = b.lists.get(conflict.file.rsplit("/", 1)[0] if "/" in conflict.file else ".", b.start)
        return (a, b, _after(listed, a)) if a.start <= listed else (b, a, _after(a.end, b))
    looked = b.first_look(conflict.file)  # read-before-write: first = the writer, second = the reader
    written = a.writes.get(conflict.file, a.end)
    if looked is not None and looked >= written:
        return a, b, _after(looked, a)
    return b, a, _after(a.end, b)


def _after(moment: float, step: Step) -> float:
    return max(0.0, moment - step.start)


def manifested(target: Target, differing: list[str] | None, log: str = "") -> bool:
    """Did the held run show the flip? `differing`: files that differ from the reference;
    None when the build failed (the control did not): then its log must name one of them."""
    if differing is None:
        return any(os.path.basename(f) in log for f in target.telling)
    return any(f in target.telling for f in differing)


def confirmed(targets_run: list[tuple[Target, int, bool]], hazards: list[Hazard], reproduce) -> list[Hazard]:
    """`hazards` with every target that manifested marked confirmed (added when the traces
    alone had not shown it unordered). `targets_run`: (target, run index, whether it
    manifested, against a clean control); `reproduce(target)` → replay command."""
    by_file = {h.file: h for h in hazards}
    out = list(hazards)
    for target, index, manifested in targets_run:
        if not manifested:
            continue
        how = f"run {index}: {target.describe()} made the build differ from the reference or fail"
        known = by_file.get(target.file)
        confirmed_hazard = Hazard(
            type=known.type if known else target.type,
            file=target.file,
            reader=known.reader if known else target.other,
            writer=known.writer if known else target.held,
            detail=how if not known else f"{known.detail}; {how}",
            evidence="not ordered: a targeted schedule reversed their order and the output changed",
            steps=sorted({target.held, target.other, *(known.steps if known else [])}),
            status="confirmed",
            reproduce=reproduce(target),
        )
        out = [confirmed_hazard if h is known else h for h in out] if known else [*out, confirmed_hazard]
        by_file[target.file] = confirmed_hazard
    return out
