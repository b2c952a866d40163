"""Axis ablation: the smallest change from the reference that still reproduces.

Like reprotest's check_auto and Hypothesis's shrink passes: start from the divergent
perturbation, put one axis at a time back to its reference value, and keep the change
when the divergence still appears (each trial is repeated: races are probabilistic).
When the reference's own settings reproduce (a rebuild under them differs: an intrinsic step),
there is no perturbation to find, and the reproducer says so rather than passing the
reference's settings off as a minimal perturbation; an unshrunk one says so too.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer import axes, replay_commands
from fuzzer.execute.executor import Executor
from fuzzer.explain.builds import Builds
from fuzzer.model import RunKind
from fuzzer.plan import Perturbation

TRIES = 2
# what shrink saw: one of TRIES rebuilds at the reference's settings differed, not every build
# (cjson's CMake configure: 2 of 5 campaign builds matched the reference)
ANY_REBUILD = (f"a rebuild at the reference's own settings differed from it (within {TRIES} tries): no "
               "perturbation is needed, so the minimal reproducer is the reference's own settings, not a "
               "perturbation found by shrinking")
UNSHRUNK = "not shrunk: the budget left no time for its trials, so the reproducer is the divergent run's settings"


@dataclass(frozen=True)
class Reproducer:
    command: str  # a `buildfuzz replay` command
    note: str = ""  # what the command is, when it is not a shrunk perturbation


def minimal_reproducer(builds: Builds, executor: Executor, divergent: Perturbation) -> Reproducer:
    if not _affordable(builds):
        return Reproducer(_replay(builds, divergent), f"minimal reproducer {UNSHRUNK}")
    found = shrink(builds, executor, divergent)
    if found == builds.runs[0].perturbation:
        return any_rebuild(builds)
    return Reproducer(_replay(builds, found))


def any_rebuild(builds: Builds) -> Reproducer:
    """The reference's own settings reproduce: a rebuild under them already differed."""
    return Reproducer(_replay(builds, builds.runs[0].perturbation), f"minimal reproducer: {ANY_REBUILD}")


def shrink(builds: Builds, executor: Executor, divergent: Perturbation) -> Perturbation:
    reference = builds.runs[0].perturbation

    def reproduces(p: Perturbation) -> bool:
        runs = (executor.run(builds.request(RunKind.SHRINK, p)) for _ in range(TRIES))
        return any(builds.differs_from_reference(r) for r in runs)

    if not _affordable(builds):
        return divergent
    if reproduces(reference):
        return reference  # not parallelism at all: any rebuild differs
    current = divergent
    for name in axes.ABLATION_ORDER:
        candidate = axes.BY_NAME[name].reset(current, reference)
        if not _affordable(builds):
            break  # out of budget: the reproducer so far still reproduces
        if candidate != current and reproduces(candidate):
            current = candidate
    return current


def _affordable(builds: Builds) -> bool:
    """Time for one more trial (TRIES builds, with room for jitter's slowdown)."""
    return builds.seconds_left() > TRIES * 2 * max(r.wall_s for r in builds.runs)


def _replay(builds: Builds, p: Perturbation) -> str:
    return replay_commands.of_perturbation(builds.store, builds.campaign, p)
