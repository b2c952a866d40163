"""Axis ablation: the smallest change from the reference that still reproduces.

Like reprotest's check_auto and Hypothesis's shrink passes: start from the divergent
perturbation, put one axis at a time back to its reference value, and keep the change
when the divergence still appears (each trial is repeated: races are probabilistic).
"""

from __future__ import annotations

import shlex

from fuzzer import axes
from fuzzer.execute.executor import Executor
from fuzzer.execute.run import RunKind
from fuzzer.plan import Perturbation, format_cpus

TRIES = 2


def minimal_reproducer(campaign, executor: Executor, divergent: Perturbation) -> str:
    return replay_command(campaign, shrink(campaign, executor, divergent))


def shrink(campaign, executor: Executor, divergent: Perturbation) -> Perturbation:
    reference = campaign.runs[0].perturbation

    def reproduces(p: Perturbation) -> bool:
        runs = (executor.run(campaign.request(RunKind.SHRINK, p)) for _ in range(TRIES))
        return any(campaign.differs_from_reference(r) for r in runs)

    if not _affordable(campaign):
        return divergent
    if reproduces(reference):
        return reference  # not parallelism at all: any rebuild differs
    current = divergent
    for name in axes.ABLATION_ORDER:
        candidate = axes.BY_NAME[name].reset(current, reference)
        if not _affordable(campaign):
            break  # out of budget: the reproducer so far still reproduces
        if candidate != current and reproduces(candidate):
            current = candidate
    return current


def _affordable(campaign) -> bool:
    """Time for one more trial (TRIES builds, with room for jitter's slowdown)."""
    return campaign.seconds_left() > TRIES * 2 * max(r.wall_s for r in campaign.runs)


def replay_command(campaign, p: Perturbation) -> str:
    words = ["buildfuzz", "replay", "--store", str(campaign.config.store), "--campaign", str(campaign.id),
             "--jobs", str(p.jobs), "--cpus", format_cpus(p.cpus)]
    if p.jitter:
        words += ["--jitter", str(p.jitter), "--jitter-seed", str(p.seed)]
    for name, value in p.variations:
        words += ["--vary", f"{name}={value}"]
    return shlex.join(words)
