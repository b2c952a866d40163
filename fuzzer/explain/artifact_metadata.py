"""A metadata-only difference's usual stabiliser, tested rather than guessed.

When the comparators find an artifact's variants identical in content and different only
in metadata (zip timestamps, tar mtimes, a gzip header), the usual fix is
`SOURCE_DATE_EPOCH`. Extra builds at the reference settings say whether it is: one
without it (the control: it must differ from the reference, or the difference follows
the perturbation, not the clock, as a member order set by -j does), then two with it,
which must give the same bytes of that artifact. The builds start at least `SPACING_S`
apart, since zip timestamps count in 2-second steps and two quick builds could match by
the clock alone. Member order alone has no such variable: it is said, not tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from fuzzer.execute.run import RunRecord
from fuzzer.model import InsideSummary, MetadataStabilizer

VARIABLE = "SOURCE_DATE_EPOCH"
EPOCH = "1700000000"  # any fixed date will do: what matters is that it does not move
BUILDS = 2
SPACING_S = 2.1  # zip's DOS timestamps count in 2 s steps; tar, ar and gzip in 1 s
CLOCK_WORDS = ("timestamp", "mtime")  # metadata the clock sets: what SOURCE_DATE_EPOCH can fix
ENVS = [()] + [((VARIABLE, EPOCH),)] * BUILDS  # the control, then the builds with the variable

# builds at the reference's settings, one per environment, started at least SPACING_S apart
Builder = Callable[[list[tuple[tuple[str, str], ...]], float], list[RunRecord]]


@dataclass(frozen=True)
class Tested:
    """What the test found, for the report: each tested artifact's stabiliser, by path, and
    why nothing was tested."""

    found: dict[str, MetadataStabilizer] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def test_stabilizer(insides: dict[str, InsideSummary | None], reference: RunRecord | None, seconds_left: float,
                    build: Builder) -> Tested:
    """`insides`: what the comparators saw inside each divergent artifact, by path."""
    targets = [path for path, inside in insides.items() if inside is not None and inside.metadata_only
               and any(word in m for m in inside.metadata for word in CLOCK_WORDS)]
    if not targets or reference is None or not reference.ok:
        return Tested()
    if seconds_left < len(ENVS) * max(reference.wall_s * 1.2, SPACING_S):
        return Tested(notes=(f"{VARIABLE} was not tested on the metadata-only differences: the budget leaves no "
                             f"room for {len(ENVS)} more builds",))
    try:
        control, *with_variable = build(ENVS, SPACING_S)
    except KeyboardInterrupt:
        return Tested(notes=(f"{VARIABLE} test interrupted: not tested",))
    return Tested({path: _verdict(path, reference, control, with_variable) for path in targets})


def _verdict(path: str, reference: RunRecord, control: RunRecord, records: list[RunRecord]) -> MetadataStabilizer:
    ok = [r for r in records if r.ok and r.manifest is not None]
    digests = [_identity(r, path) for r in ok]
    identical = digests.count(digests[0]) if digests else 0
    what = f"{len(records)} builds at the reference settings with {VARIABLE}={EPOCH}"
    if not control.ok or control.manifest is None:
        evidence = f"{VARIABLE} not tested on {path}: the control build at the reference settings failed"
    elif _identity(control, path) == _identity(reference, path):
        evidence = (f"{VARIABLE} not tested on {path}: a build at the reference settings without it matched the "
                    f"reference, so the difference follows the perturbation, not the clock")
    elif len(ok) < len(records):
        evidence = f"{VARIABLE} not shown to stabilise {path}: {len(records) - len(ok)} of the {what} failed"
    elif identical == BUILDS and digests[0] is not None:
        evidence = (f"stabilised by {VARIABLE}: a build at the reference settings without it differed from the "
                    f"reference in {path}; {what} gave identical bytes ({identical} of {BUILDS}: few builds, "
                    f"evidence rather than a bound)")
        return MetadataStabilizer(VARIABLE, True, len(records), identical, evidence)
    else:
        evidence = f"not stabilised by {VARIABLE}: {what} still differed in {path} ({identical} of {BUILDS} alike)"
    return MetadataStabilizer(VARIABLE, False, len(records), identical, evidence)


def _identity(record: RunRecord, path: str) -> tuple[str, str, bool] | None:
    entry = record.manifest.entries.get(path)
    return entry.identity() if entry is not None else None
