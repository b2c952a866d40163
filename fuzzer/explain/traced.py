"""Trace a divergent run and the reference, so their steps can be compared.

The divergent perturbations are re-run under strace until one diverges again (tracing
changes timing, and races are probabilistic), cycling through the telling runs, for as
long as the budget allows. Every traced run is kept: each is evidence for hazards. The
reference is traced last, so its final tree is left in the workspace for step replays; the
step audit's traced reference serves instead when no step is replayed here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from fuzzer.compare import Comparison
from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunRecord
from fuzzer.explain.builds import Builds
from fuzzer.model import RunKind
from fuzzer.plan import Perturbation

MIN_ATTEMPTS = 2  # traced reruns of divergent perturbations, whatever the budget
MAX_ATTEMPTS = 8
TRACE_SLOWDOWN = 4.0  # a traced build takes up to this many untraced builds' time


@dataclass(frozen=True)
class TracedPair:
    reference: RunRecord
    divergent: RunRecord | None  # None when no traced run diverged
    attempts: tuple[RunRecord, ...]  # every traced rerun of a divergent perturbation


def divergent_perturbations(runs: tuple[RunRecord, ...], comparison: Comparison) -> list[Perturbation]:
    """Perturbations worth tracing, most telling first: failures, then divergent runs."""
    seen: list[Perturbation] = []
    for index in comparison.telling_runs():
        p = runs[index].perturbation
        if p not in seen:
            seen.append(p)
    return seen


def trace_pair(builds: Builds, comparison: Comparison, executor: Executor,
               reference: RunRecord | None = None) -> TracedPair:
    """`reference`: a traced reference build already at hand (the step audit's), traced
    again only when its tree is needed here (`trace_reference`)."""
    candidates = divergent_perturbations(builds.runs, comparison)
    attempts: list[RunRecord] = []
    divergent = None
    while len(attempts) < MAX_ATTEMPTS and (len(attempts) < MIN_ATTEMPTS or _affordable(builds)):
        perturbation = candidates[len(attempts) % len(candidates)]
        record = executor.run(builds.request(RunKind.TRACE, perturbation, trace=True))
        attempts.append(record)
        if builds.differs_from_reference(record):
            divergent = record
            break
    return TracedPair(reference or trace_reference(builds, executor), divergent, tuple(attempts))


def campaign_traced(builds: Builds) -> tuple[RunRecord, ...]:
    """The campaign's own traced runs whose traces are still at hand (the guided run after
    the reference, the held targets): evidence for hazards like any traced rerun."""
    return tuple(r for r in builds.runs[1:] if r.trace_path and os.path.exists(r.trace_path))


def trace_reference(builds: Builds, executor: Executor) -> RunRecord:
    return executor.run(builds.request(RunKind.TRACE_REFERENCE, builds.runs[0].perturbation, trace=True))


def _affordable(builds: Builds) -> bool:
    """One more traced build, and the reference's, still fit in the budget."""
    typical = max(r.wall_s for r in builds.runs)
    return builds.seconds_left() > 2 * TRACE_SLOWDOWN * typical


def run_label(record: RunRecord) -> str:
    kind = "traced rerun" if record.kind is not RunKind.EXPLORE else f"run {record.index}"
    return f"{kind} ({record.perturbation.describe()})"


def original_run(runs: tuple[RunRecord, ...], record: RunRecord) -> int | None:
    """The campaign's run whose conditions a build had: itself, or the run a traced rerun repeats."""
    if record.kind is RunKind.EXPLORE:
        return record.index
    return next((run.index for run in runs if run.perturbation == record.perturbation), None)
