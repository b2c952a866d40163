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
run must differ in the conflict's file or in what the step that went first wrote, where no run
without a hold differed. A held run that fails confirms a conflict only when the step that
failed is one of its two (the target make or ninja says it failed is one of their outputs) and
no run without a hold failed on that target: holding a directory's maker makes every
compile into it fail, which says nothing of a third step that merely writes next to it. Then
the conflict is reported as a **confirmed** hazard with its own replay command; a build
that differs anyway (an intrinsic generator, a race that needs no help) confirms nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from msgspec import structs

from fuzzer import hold
from fuzzer.execute.logs import any_target_of, error_lines, failed_targets
from fuzzer.plan import Perturbation, Planned, with_guided
from fuzzer.model import Hazard, HazardStatus, HazardType, Reason
from fuzzer.trace.hazards import DUPLICATE, LISTING_RACE, MKDIR_RACE, OVERLAP, WRITE_WRITE, conflicts
from fuzzer.trace.steps import BuildTrace, Step

MAX_TARGETS = 6  # targeted runs per campaign; each costs one build
MARGIN = 1.5  # hold this many times the gap to flip, plus SLACK: timings shift between runs
SLACK_S = 0.1


@dataclass(frozen=True)
class Flip:
    """One conflict a held step is part of: holding it lets `other` go first on `file`."""

    type: HazardType
    file: str
    other: str  # command of the step that should go first
    telling: tuple[str, ...]  # files whose change shows this flip: the conflict's, and what `other` wrote
    parties: tuple[str, ...] = ()  # what the two steps wrote: a failed target among them is theirs


@dataclass(frozen=True)
class Target:
    """One targeted run: `held` waits `ms` at its start, for every conflict it is part of
    (`flips`, the best-ranked first)."""

    perturbation: Perturbation
    held: str  # command of the step held back
    ms: int
    flips: tuple[Flip, ...]

    def describe(self, flip: Flip | None = None) -> str:
        flip = flip or self.flips[0]
        return f"holding `{self.held}` back {self.ms} ms so that `{flip.other}` goes first on {flip.file}"


def targets(trace: BuildTrace, base: Perturbation, limit: int = MAX_TARGETS) -> list[Target]:
    """Targeted perturbations (no jitter, `base`'s jobs and CPUs) from one trace, best
    first: one per step held back, long enough for all of its conflicts."""
    by_step: dict[str, list[tuple[tuple, Flip, float, Step]]] = {}
    for conflict in conflicts(trace):
        if conflict.type == DUPLICATE:
            continue  # both runs share one argv: holding one holds the other
        first, second, wait = _order(conflict)
        if first.argv == second.argv:
            continue
        flip = Flip(conflict.type, conflict.file, second.command,
                    tuple(sorted({conflict.file.rstrip("/"), *second.writes})), tuple(sorted({*first.writes, *second.writes})))
        rank = (conflict.relation != OVERLAP, max(0.0, second.start - first.end), conflict.file)
        by_step.setdefault(hold.argv_hash(first.argv), []).append((rank, flip, wait, first))
    found = []
    for entries in by_step.values():
        entries.sort(key=lambda e: e[0])
        unique = tuple(dict.fromkeys(flip for _, flip, _, _ in entries))
        ms = int((max(wait for _, _, wait, _ in entries) * MARGIN + SLACK_S) * 1000)
        held = entries[0][3]
        found.append((entries[0][0], Target(control(base).with_variation("hold", hold.value(held.argv, ms)),
                                            held.command, ms, unique)))
    return [t for _, t in sorted(found, key=lambda item: item[0])][:limit]


@dataclass(frozen=True)
class GuidedPlan:
    """A schedule with targeted runs in it: which run holds which target, and which is the control."""

    plan: list[Planned]
    targets: dict[int, Target]  # run index → the target it runs
    control_index: int | None  # None: a short --runs cut it


def merged(plan: list[Planned], found: list[Target], base: Perturbation, runs: int,
           promised: tuple[str, ...] = ()) -> GuidedPlan:
    """`plan` (reference, traced run, seeded schedule) with `found` right after the traced
    run and their control (fuzzer.plan.with_guided), cut to `runs`."""
    together = with_guided(plan, [t.perturbation for t in found], control(base), runs, promised)
    at = {p.perturbation: i for i, p in enumerate(together) if p.reason in (Reason.TARGET, Reason.CONTROL)}
    control_index = next((i for i, p in enumerate(together) if p.reason is Reason.CONTROL), None)
    return GuidedPlan(together, {at[t.perturbation]: t for t in found if t.perturbation in at}, control_index)


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


def manifested(target: Target, differing: list[str] | None, log: str = "",
               unheld: frozenset[str] = frozenset()) -> list[Flip]:
    """The flips the held run showed. `differing`: files that differ from the reference;
    None when the build failed (the control did not): then its log must name the flip's
    file and a file of the step that went first (`parser.h` and `lexer.o`, not just the
    header every compile reads), and the target the driver says failed must be one of the
    flip's two steps' outputs. `unheld`: files runs without a hold differed in or failed
    on; a held run's difference or failure there is no evidence of the hold (a build date
    that the control matched only because it ran in the reference's clock second)."""
    if differing is None:
        errors = error_lines(log)  # make echoes every command: only what failed counts
        named = lambda f: os.path.basename(f.rstrip("/")) in errors
        failed = failed_targets(log)
        return [f for f in target.flips if named(f.file) and any(named(t) for t in f.telling if t != f.file)
                and (not failed or any_target_of(failed - unheld, f.parties))]
    return [f for f in target.flips if any(t in f.telling and t not in unheld for t in differing)]


@dataclass(frozen=True)
class HeldRun:
    """What a targeted run gave: `differing` files from the reference, None when it failed."""

    target: Target
    index: int
    differing: list[str] | None
    log: str


def confirm(hazards: list[Hazard], held: list[HeldRun], control_matched: bool, unheld: frozenset[str],
            reproduce) -> list[Hazard]:
    """`hazards` with the flips the held runs showed confirmed, if the control matched the
    reference: when the build differs without any hold, a held run's difference proves
    nothing; nor does it in a file that `unheld` runs (without a hold) differed in."""
    if not control_matched:
        return list(hazards)
    ran = [(run.target, run.index, manifested(run.target, run.differing, run.log, unheld)) for run in held]
    return confirmed(ran, hazards, reproduce)


def confirmed(targets_run: list[tuple[Target, int, list[Flip]]], hazards: list[Hazard], reproduce) -> list[Hazard]:
    """`hazards` with every flip a target showed marked confirmed (added when the traces
    alone had not shown it unordered). `targets_run`: (target, run index, the flips it
    showed against a clean control); `reproduce(target)` → replay command."""
    by_file = {f: h for h in hazards for f in (h.files or [h.file])}
    out = list(hazards)
    for target, index, flips in targets_run:
        for flip in flips:
            how = f"run {index}: {target.describe(flip)} made the build differ from the reference or fail"
            known = by_file.get(flip.file)
            # a known hazard keeps what else it says (the edge its build's graph lacks)
            confirmed_hazard = structs.replace(
                known or Hazard(flip.type, flip.file, reader=flip.other, writer=target.held, files=[flip.file]),
                detail=how if not known else f"{known.detail}; {how}",
                evidence="not ordered: a targeted schedule reversed their order and the output changed",
                steps=sorted({target.held, flip.other, *(known.steps if known else [])}),
                status=HazardStatus.CONFIRMED,
                reproduce=reproduce(target),
                runs=list(dict.fromkeys([*(known.runs if known else []), index])),
            )
            out = [confirmed_hazard if h is known else h for h in out] if known else [*out, confirmed_hazard]
            by_file.update(dict.fromkeys(confirmed_hazard.files, confirmed_hazard))
    return out
