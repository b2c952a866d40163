"""Metadata, proven by experiment: a step that is stable replayed alone, on input contents
identical in both builds, may still record its inputs' metadata (`ar U` stores member
mtimes, `tar` stores mtimes and modes) or sort its inputs by it (`ls -t`).

Two builds only show which metadata differed. That a difference reached the output is
shown by replays: the step replayed with those inputs' metadata moved gives other bytes,
the same in each replay, and with the metadata put back gives its old bytes again. Each
experiment moves only what differed between the builds:

- mtimes shifted a day back, their order kept: the output changes → it records mtimes;
- mtimes reversed in order (same moment range): the output changes → it sorts by them;
- modes, when the builds' modes could differ (the umask axis, an executable bit that
  differed): group and other write bits flipped → it records modes.

Owners and directory order are not moved: builds at one path, as one user, give every
input the same owner, and directory order is what the `dirorder` axis varies.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fuzzer.execute.replay_spread import Replayer
from fuzzer.execute.step_replay import MovedMetadata, Variation
from fuzzer.observe import Manifest

MOVED_REPLAYS = 2  # under the moved metadata: identical to each other, unlike the stable bytes
CONTROL_REPLAYS = 1  # with the metadata put back: the stable bytes again
EXPERIMENT_REPLAYS = MOVED_REPLAYS + CONTROL_REPLAYS
SHIFT_NS = 86_400 * 10**9  # a day back: whole seconds (archives store seconds), never in the future
MODE_BITS = 0o022  # what a umask changes
LISTED = 3


@dataclass(frozen=True)
class Experiment:
    name: str  # what the variation is called in logs
    what: str  # the metadata moved
    how: str  # how they were moved, for the evidence
    records: str  # what the step is shown to depend on
    remedy: str
    shift_ns: int = 0
    reverse: bool = False
    mode_xor: int = 0


MTIMES = Experiment("mtimes shifted", "mtimes", "shifted a day back (their order kept)", "records its inputs' mtimes",
                    "`ar D` (deterministic archives), `tar --mtime=@$SOURCE_DATE_EPOCH --sort=name`, or clamping "
                    "the inputs' mtimes to SOURCE_DATE_EPOCH before the step", shift_ns=-SHIFT_NS)
MTIME_ORDER = Experiment("mtimes reversed", "mtimes", "put in reverse order", "orders its inputs by their mtimes",
                         "list the inputs by name (`$(sort ...)`, `LC_ALL=C sort`), never by time (`ls -t`)",
                         reverse=True)
MODES = Experiment("modes flipped", "modes", "given other group and other write bits", "records its inputs' modes",
                   "`tar --mode=go-w` or a fixed umask (022) for the build", mode_xor=MODE_BITS)


@dataclass(frozen=True)
class Differed:
    """Which of a step's inputs had other metadata in the two builds."""

    files: tuple[str, ...]  # its inputs in the tree that the step does not itself rewrite
    mtimes: tuple[str, ...]  # those whose mtime differed
    spread_s: float  # how far apart their mtimes were, at most
    modes: bool  # whether their modes could have differed (the builds show only the executable bit)

    def describe(self) -> str:
        if not self.mtimes:
            return "its inputs' mtimes were the same in both builds"
        more = f" and {len(self.mtimes) - LISTED} more" if len(self.mtimes) > LISTED else ""
        return (f"the mtimes of {len(self.mtimes)} of its inputs differed between the builds "
                f"({', '.join(self.mtimes[:LISTED])}{more}: up to {self.spread_s:.1f} s apart)")


def differed(inputs: Iterable[str], restored: set[str], reference: Manifest, divergent: Manifest,
             umask_varied: bool) -> Differed:
    """From the two builds' manifests: `inputs`, the step's reads in the tree; `restored`,
    what the step itself writes (never moved: a replay puts those back)."""
    files = [f for f in sorted(inputs) if f not in restored and _file(reference, f) and _file(divergent, f)]
    changed = [f for f in files if reference.entries[f].mtime_ns != divergent.entries[f].mtime_ns]
    spread = max((abs(reference.entries[f].mtime_ns - divergent.entries[f].mtime_ns) for f in changed), default=0)
    exec_bits = any(reference.entries[f].executable != divergent.entries[f].executable for f in files)
    return Differed(tuple(files), tuple(changed), spread / 1e9, bool(files) and (umask_varied or exec_bits))


def experiments(found: Differed) -> list[Experiment]:
    """What to move, cheapest explanation first; nothing that did not differ."""
    chosen = ([MTIMES] + ([MTIME_ORDER] if len(found.mtimes) > 1 else [])) if found.mtimes else []
    return chosen + ([MODES] if found.modes else [])


def follows(replayer: Replayer, stable: str, found: Differed, experiment: Experiment) -> str | None:
    """Run one experiment; its evidence when the output followed the moved metadata."""
    paths = found.files if experiment is MODES else found.mtimes
    moved = MovedMetadata(paths, experiment.shift_ns, experiment.reverse, experiment.mode_xor)
    under = replayer.replay(Variation(experiment.name, moved=moved), MOVED_REPLAYS)
    if under.failed or under.varies or under.digests[0] == stable:
        return None
    control = replayer.replay(Variation("metadata put back"), CONTROL_REPLAYS)
    if control.failed or control.digests[0] != stable:
        return None
    return (f"replayed with those inputs' {experiment.what} {experiment.how} it gave other bytes ({MOVED_REPLAYS} "
            f"of {MOVED_REPLAYS} identical), and with them put back its old bytes again ({CONTROL_REPLAYS} replay): "
            f"it {experiment.records} (usual remedy: {experiment.remedy})")


def _file(manifest: Manifest, path: str) -> bool:
    entry = manifest.entries.get(path)
    return entry is not None and entry.kind == "file"
