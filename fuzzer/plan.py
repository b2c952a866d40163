"""plan: the space of perturbations and the seeded schedule that walks it.

A `Perturbation` is one point in the space (job count, CPU set, jitter). A campaign's
schedule is a pure function of its `Space` and seed, so a campaign can be resumed or
replayed run for run. Run 0 is the reference: jobs=1, every CPU, no jitter.

A campaign's runs are `Planned`: each perturbation with the reason it runs (`Reason`).
`explore_plan` keeps the schedule's promises: no two runs share a perturbation unless one
is a deliberate repeat (a control, or a space with fewer points than runs), and every
promised axis (each one asked for with `--vary`) gets a run within the first runs.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Iterable, Iterator

import msgspec

from fuzzer.model import Reason

HEAVY_JITTER = 0.8
MAX_CPU = 1 << 16  # far above any real CPU number; bounds the set a CPU range expands to


class Perturbation(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """One build's variation. `seed` drives the jitter engine's choices; `variations`
    holds the order and environment axes that differ from the reference (fuzzer.axes),
    as sorted (name, value) pairs.

    Its JSON (the store's, the report's `runs[].perturbation`) always has jobs, cpus,
    jitter and seed, and `variations` only when one differs: omit_defaults leaves out only
    an empty dict from its default factory, and never a value made by the float and int
    factories."""

    jobs: int
    cpus: tuple[int, ...]
    jitter: float = msgspec.field(default_factory=float)
    seed: int = msgspec.field(default_factory=int)
    varied: dict[str, str] = msgspec.field(default_factory=dict, name="variations")  # never changed once made

    def __hash__(self) -> int:  # a dict field has no hash of its own; perturbations fill sets
        return hash((self.jobs, self.cpus, self.jitter, self.seed, self.variations))

    @property
    def variations(self) -> tuple[tuple[str, str], ...]:
        return tuple(sorted(self.varied.items()))

    def with_variation(self, name: str, value: str) -> "Perturbation":
        """This perturbation with axis `name` at `value` ("" = as in the reference)."""
        kept = {k: v for k, v in self.varied.items() if k != name}
        if value:
            kept[name] = value
        return msgspec.structs.replace(self, varied=dict(sorted(kept.items())))

    @property
    def ncpus(self) -> int:
        return len(self.cpus)

    def describe(self) -> str:
        jitter = f"jitter={self.jitter:.2f}/seed={self.seed}" if self.jitter else "no jitter"
        varied = "".join(f" {name}={value}" for name, value in self.variations)
        return f"jobs={self.jobs} cpus={format_cpus(self.cpus)} {jitter}{varied}"


class Space(msgspec.Struct, frozen=True):
    """What may vary. `cpus` is every CPU the fuzzer may use (its own affinity)."""

    jobs: tuple[int, int]
    cpus: tuple[int, ...]
    vary_cpus: bool = True
    vary_jitter: bool = True

    @property
    def vary_jobs(self) -> bool:
        return self.jobs[0] != self.jobs[1]


@dataclass(frozen=True)
class Planned:
    perturbation: Perturbation
    reason: Reason


SCAN_PER_RUN = 20  # candidates looked at per run wanted, before a small space counts as exhausted


def explore_plan(candidates: Iterable[Planned], runs: int, promised: tuple[str, ...] = ()) -> list[Planned]:
    """The first `runs` distinct perturbations of `candidates` (the reference first), with
    the first run of every `promised` axis among them. Where the space has fewer distinct
    points than `runs`, the last ones are repeats, labelled as such."""
    distinct: list[Planned] = []
    seen: set[Perturbation] = set()
    for c in itertools.islice(candidates, runs * SCAN_PER_RUN + 64):
        if c.perturbation not in seen:
            seen.add(c.perturbation)
            distinct.append(c)
        if len(distinct) >= runs and not _missing(distinct, promised):
            break
    plan = fit(distinct, runs, promised)
    repeats = itertools.cycle(plan[1:] or plan)
    return plan + [Planned(next(repeats).perturbation, Reason.REPEAT) for _ in range(runs - len(plan))]


def fit(plan: list[Planned], runs: int, promised: tuple[str, ...] = (), fixed: int = 1) -> list[Planned]:
    """`plan` cut to `runs`, in its order, keeping its first `fixed` runs (those that ran
    already) and the first run of each promised axis; later runs make room for them."""
    keep = set(range(min(fixed, len(plan))))
    keep |= {i for name in promised if (i := _first_varying(plan, name)) is not None}
    for i in range(len(plan)):
        if len(keep) >= runs:
            break
        keep.add(i)
    return [p for i, p in enumerate(plan) if i in keep]


def _first_varying(plan: list[Planned], name: str) -> int | None:
    return next((i for i, p in enumerate(plan) if name in dict(p.perturbation.variations)), None)


def _missing(plan: list[Planned], promised: tuple[str, ...]) -> list[str]:
    return [name for name in promised if _first_varying(plan, name) is None]


def smallest_runs(promised: tuple[str, ...]) -> int:
    """The fewest runs that keep the promise: the reference, and one run per promised axis."""
    return 1 + len(promised)


def with_guided(plan: list[Planned], targets: list[Perturbation], control: Perturbation, runs: int,
                promised: tuple[str, ...] = (), ran: int = 2) -> list[Planned]:
    """The plan with targeted runs after the first `ran` runs (which ran already),
    alternating with the schedule, whose extremes (one CPU, ...) find other bugs early.
    The control comes second: first it would delay the best target, last a short --runs
    would cut it. A run of the schedule with the control's settings becomes the control
    (the same build twice would prove nothing more); one that ran already is repeated."""
    head, rest = plan[:ran], [p for p in plan[ran:] if p.perturbation not in {control, *targets}]
    guided = [Planned(t, Reason.TARGET) for t in targets]
    guided.insert(1, Planned(control, Reason.CONTROL))
    merged = [p for pair in zip(guided, rest) for p in pair]
    shorter = min(len(guided), len(rest))
    return fit(head + merged + guided[shorter:] + rest[shorter:], runs, promised, fixed=ran)


def reference(space: Space) -> Perturbation:
    return Perturbation(jobs=space.jobs[0], cpus=space.cpus)


def schedule(space: Space, seed: int) -> Iterator[Perturbation]:
    """Reference first, then the extremes, then seeded samples, forever.

    Extremes come early because most parallelism bugs show at max jobs with jitter
    (missing dependencies, appends), or at one CPU (nproc-dependent output).
    """
    first, extremes, samples = phases(space, seed)
    yield first
    yield from extremes
    yield from samples


def phases(space: Space, seed: int) -> tuple[Perturbation, list[Perturbation], Iterator[Perturbation]]:
    """The schedule's three parts (reference, extremes, endless samples), for callers that
    add runs between them (fuzzer.axes adds the order and environment extremes)."""
    rng = random.Random(seed)
    extremes = _extremes(space, rng)

    def samples() -> Iterator[Perturbation]:
        while True:
            yield _sample(space, rng)

    return reference(space), extremes, samples()


def _extremes(space: Space, rng: random.Random) -> list[Perturbation]:
    lo, hi = space.jobs
    heavy = HEAVY_JITTER if space.vary_jitter else 0.0
    one_cpu = (rng.choice(space.cpus),) if space.vary_cpus else space.cpus
    points = [
        Perturbation(hi, space.cpus, heavy, rng.getrandbits(32)),
        Perturbation(hi, one_cpu, 0.0, 0),
        Perturbation(hi, space.cpus, 0.0, 0),
        Perturbation(lo, one_cpu, heavy, rng.getrandbits(32)),
        Perturbation(max(lo, hi // 2), space.cpus, heavy / 2, rng.getrandbits(32)),
    ]
    ref = reference(space)
    unique: list[Perturbation] = []
    for p in points:
        p = p if p.jitter else Perturbation(p.jobs, p.cpus)
        if p != ref and p not in unique:
            unique.append(p)
    return unique or [Perturbation(ref.jobs, ref.cpus, 0.0, 0)]


def _sample(space: Space, rng: random.Random) -> Perturbation:
    lo, hi = space.jobs
    # log-uniform: -j2 and -j3 are as different as -j8 and -j12
    jobs = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
    jobs = min(max(jobs, lo), hi)
    cpus = space.cpus
    if space.vary_cpus and len(space.cpus) > 1:
        k = rng.randint(1, len(space.cpus))
        cpus = tuple(sorted(rng.sample(space.cpus, k)))
    jitter = 0.0
    seed = 0
    if space.vary_jitter and rng.random() < 0.7:
        jitter = round(rng.uniform(0.2, 1.0), 2)
        seed = rng.getrandbits(32)
    return Perturbation(jobs, cpus, jitter, seed)


def format_cpus(cpus: tuple[int, ...]) -> str:
    """`0-3,6` style, as taskset -c and /sys print CPU lists."""
    spans: list[list[int]] = []  # [first, last] of each run of consecutive CPUs
    for cpu in sorted(cpus):
        if spans and cpu == spans[-1][1] + 1:
            spans[-1][1] = cpu
        else:
            spans.append([cpu, cpu])
    return ",".join(f"{first}-{last}" if last != first else f"{first}" for first, last in spans)


def parse_cpus(text: str) -> tuple[int, ...]:
    """`0-3,6` → (0, 1, 2, 3, 6); raises ValueError on anything else, an empty set included."""
    cpus: set[int] = set()
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        if not (lo.isdecimal() and (hi.isdecimal() or not sep)) or not int(lo) <= int(hi or lo) <= MAX_CPU:
            raise ValueError(f"not a CPU list: {text!r}")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return tuple(sorted(cpus))


def parse_jobs_range(text: str) -> tuple[int, int]:
    """`1-16` or `8` → (lo, hi); raises ValueError with a readable message."""
    lo_text, sep, hi_text = text.partition("-")
    try:
        lo = int(lo_text)
        hi = int(hi_text) if sep else lo
    except ValueError:
        raise ValueError(f"--jobs expects N or LO-HI with whole numbers, got {text!r}") from None
    if lo < 1 or hi < lo:
        raise ValueError(f"--jobs range must satisfy 1 <= LO <= HI, got {text!r}")
    return lo, hi
