"""A replay of one stored run's exact perturbation, judged against the reference and the
recording (`buildfuzz replay`; the campaign package makes the build)."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.execute.run import RunRecord
from fuzzer.explain.builds import Selection
from fuzzer.observe import Manifest

SHOWN_PATHS = 10


@dataclass(frozen=True)
class ReplayResult:
    reproduced: bool  # the replay failed or differs from the reference: exit 1
    summary: str


def judged(selection: Selection, runs: tuple[RunRecord, ...], index: int | None, replayed: RunRecord) -> ReplayResult:
    """`replayed` against the reference (`runs[0]`) and, given its `index`, the run it replays."""
    reference = runs[0].manifest
    same_as_reference, against_reference = _compared(selection, replayed, runs[0], reference, "the reference")
    lines = [f"{replayed.perturbation.describe()}: the replay {replayed.status.value}"]
    if index:  # run 0 is the reference itself
        lines.append(_compared(selection, replayed, runs[index], reference, f"run {index}")[1])
    lines.append(against_reference)
    if not replayed.ok:
        lines.append(f"log: {replayed.log_path}\n{replayed.log_tail}")
    reproduced = not (replayed.ok and same_as_reference)
    lines.append("reproduced: the build failed or differs from the reference" if reproduced
                 else "not reproduced: the build matched the reference")
    return ReplayResult(reproduced, "\n".join(lines))


def _compared(selection: Selection, replayed: RunRecord, recorded: RunRecord, reference: Manifest | None,
              name: str) -> tuple[bool, str]:
    """Whether the replay gave what `recorded` gave (its status; its compared files when
    both succeeded, each settled against the `reference`'s as the campaign judged its runs),
    and a line saying so."""
    if not (recorded.ok and replayed.ok):
        same = recorded.status == replayed.status
        return same, f"{name} was {recorded.status.value}: {'the same' if same else 'a different'} outcome"
    differing = selection.differing(recorded.built, replayed.built, reference)
    if not differing:
        return True, f"same digests as {name} ({len(selection.compared(replayed.built).entries)} files compared)"
    shown = "".join(f"\n  {p}" for p in differing[:SHOWN_PATHS])
    more = f"\n  ... and {len(differing) - SHOWN_PATHS} more" if len(differing) > SHOWN_PATHS else ""
    files = f"{len(differing)} files differ" if len(differing) > 1 else "1 file differs"
    return False, f"{files} from {name}:{shown}{more}"
