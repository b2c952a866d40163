"""Files the campaign's runs differed in that no traced divergent build did (`fuzzer.explain`).

Tracing a divergent build again is a sample: a step that varies one build in three may
not vary in it. Such a file is not explained by the traced build's roots. When the step
audit replayed the file's step alone and saw that very file vary, those replays are the
evidence: the audit's culprit is named for the file, with its kind and stabilisers. Every
other such file is listed in one note, with no step named for it, and in the report's
`unnamed` with why: the traced rerun did not differ in it, or it failed before it built the
file (then its number, exit status and failing targets), or no traced rerun diverged.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

from msgspec import structs

from fuzzer.compare import Comparison
from fuzzer.execute.logs import failed_targets
from fuzzer.execute.run import RunRecord
from fuzzer.explain.builds import Builds
from fuzzer.model import Culprit, NoStep, UnnamedFile
from fuzzer.observe import Manifest

LISTED = 5  # files named in the note; the rest are counted


def differing_from(first: Manifest, manifests: Iterable[Manifest],
                   everything: Callable[[Manifest], Manifest]) -> set[str]:
    """Files any of `manifests` (`everything` selects their compared files) differs in from `first`."""
    return {path for m in manifests for path in first.differing(everything(m))}


def runs_text(indices: Sequence[int]) -> str:
    return f"run {indices[0]}" if len(indices) == 1 else f"runs {', '.join(map(str, indices))}"


def untraced_files(runs: Sequence[RunRecord], comparison: Comparison, everything: Callable[[Manifest], Manifest],
                   traced: set[str]) -> dict[str, list[int]]:
    """Files the successful runs that differ from run 0 differ in, less `traced` (those a
    traced divergent build differed in too), each with the runs that differed in it."""
    first = everything(runs[0].built)
    found: dict[str, list[int]] = {}
    for i in comparison.telling_runs():
        if runs[i].ok:
            for path in differing_from(first, [runs[i].built], everything) - traced:
                found.setdefault(path, []).append(i)
    return dict(sorted(found.items()))


def seen_by_audit(untraced: dict[str, list[int]], audited: Mapping[str, Culprit],
                  traced: str) -> tuple[list[Culprit], list[str]]:
    """The culprits the step audit classified whose replays alone saw those very files vary,
    each named for them on that evidence though `traced` (the traced reruns) did not differ
    in them; and the files no audit replay saw vary."""
    seen = []
    for culprit in audited.values():
        files = sorted(untraced.keys() & set(culprit.outputs))
        if files:
            runs = runs_text(sorted({i for f in files for i in untraced[f]}))
            seen.append(structs.replace(culprit, outputs=files, evidence=(
                f"{culprit.evidence}\n{', '.join(files)} differed in {runs} but not in the {traced}; the step "
                "audit's replays of this step alone saw that very output vary: it is named for it on that evidence")))
    named = {f for c in seen for f in c.outputs}
    return seen, [f for f in untraced if f not in named]


def unnamed(untraced: dict[str, list[int]], left: list[str], why: NoStep, traced: RunRecord | None = None,
            label: str = "") -> tuple[UnnamedFile, ...]:
    """Each file of `left` (of `untraced`: file → the runs that differed in it), with why no
    step is named for it; `traced`: the traced rerun that diverged, by `label`."""
    if traced is None or traced.ok:
        return tuple(UnnamedFile(path, untraced[path], why, label, traced.index if traced else None) for path in left)
    failing = sorted(failed_targets(traced.log_tail))
    return tuple(UnnamedFile(path, untraced[path], why, label, traced.index, traced.exit_code, failing,
                             traced.log_path or "") for path in left)


def unexplained(builds: Builds, comparison: Comparison, audited: Mapping[str, Culprit], reached: set[str], why: NoStep,
                traced: RunRecord | None, label: str) -> tuple[list[Culprit], tuple[UnnamedFile, ...]]:
    """Of the files other runs differed in and the traced rerun did not reach (`reached`:
    those its roots explain), the audit's culprits for those its replays saw vary, and the
    rest, each with `why` no step is named for it (`traced`: the rerun that diverged)."""
    files = untraced_files(builds.runs, comparison, builds.selection.everything, reached)
    seen, left = seen_by_audit(files, audited, label)
    return seen, unnamed(files, left, why, traced, label)


def note(unnamed: tuple[UnnamedFile, ...]) -> tuple[str, ...]:
    """Files neither the traced reruns nor the step audit's replays saw vary: no step is named."""
    if not unnamed:
        return ()
    first, paths = unnamed[0], [u.path for u in unnamed]
    listed = listing(paths)
    runs = runs_text(_runs(unnamed))
    if first.why == NoStep.NOT_REPRODUCED:
        return (f"no step is named for {listed} ({len(paths)} file(s) the runs differed in, {runs}): the divergence "
                f"did not reappear in {first.traced}, nor did a step audit's replay see them vary",)
    if first.why == NoStep.TRACED_RERUN_FAILED:
        failing = f", failing {', '.join(first.failing)}" if first.failing else ""
        return (f"no step is named for {listed} ({len(paths)} file(s) the drawn builds differed in, {runs}): the "
                f"{first.traced} that diverged failed (exit {first.exit_code}{failing}) before it built them, so no "
                f"traced build differed in them, nor did a step audit's replay (its log: {first.log})",)
    return (f"{len(paths)} file(s) differed in other runs but not in the {first.traced}, so no step is named for "
            f"them (not enough evidence: no traced build differed in them, nor did a step audit's replay): {listed}",)


def listing(paths: list[str]) -> str:
    """The first few paths, the rest counted."""
    return ", ".join(paths[:LISTED]) + (f" and {len(paths) - LISTED} more" if len(paths) > LISTED else "")


def _runs(unnamed: tuple[UnnamedFile, ...]) -> list[int]:
    return sorted({i for u in unnamed for i in u.runs})
