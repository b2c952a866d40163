"""Trace a divergent run and the reference, so their steps can be compared.

The divergent perturbation is re-run under strace until it diverges again (tracing
changes timing, and races are probabilistic); the reference is traced last, so its
final tree is left in the workspace for step replays.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.execute.local import LocalExecutor, RunOptions, RunRecord
from fuzzer.plan import Perturbation

ATTEMPTS = 4


@dataclass(frozen=True)
class TracedPair:
    reference: RunRecord
    divergent: RunRecord | None  # None when no traced run diverged
    attempts: int


def divergent_perturbations(campaign, comparison) -> list[Perturbation]:
    """Perturbations worth tracing, most telling first: failures, then divergent runs."""
    seen: list[Perturbation] = []
    for index in comparison.telling_runs():
        p = campaign.runs[index].perturbation
        if p not in seen:
            seen.append(p)
    return seen


def trace_pair(campaign, comparison, executor: LocalExecutor) -> TracedPair:
    candidates = divergent_perturbations(campaign, comparison)
    reference = campaign.runs[0]
    divergent, attempts = None, 0
    for attempt in range(ATTEMPTS):
        perturbation = candidates[attempt % len(candidates)]
        attempts += 1
        record = executor.run(1000 + attempt, perturbation, RunOptions(trace=True, label="-trace"))
        if campaign.differs_from_reference(record):
            divergent = record
            break
    traced_reference = executor.run(1000, reference.perturbation, RunOptions(trace=True, label="-trace-ref"))
    return TracedPair(traced_reference, divergent, attempts)

