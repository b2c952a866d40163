"""Files the campaign's runs differed in that no traced divergent build did (`fuzzer.explain`).

Tracing a divergent build again is a sample: a step that varies one build in three may
not vary in it. Such a file is not explained by the traced build's roots. When the step
audit replayed the file's step alone and saw that very file vary, those replays are the
evidence: the audit's culprit is named for the file, with its kind and stabilisers. Every
other such file is listed in one note, with no step named for it.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

from msgspec import structs

from fuzzer.compare import Comparison
from fuzzer.execute.run import RunRecord
from fuzzer.model import Culprit
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


def note(unnamed: list[str], traced: str) -> tuple[str, ...]:
    """Files neither the traced reruns nor the step audit's replays saw vary: no step is named."""
    if not unnamed:
        return ()
    more = f" and {len(unnamed) - LISTED} more" if len(unnamed) > LISTED else ""
    return (f"{len(unnamed)} file(s) differed in other runs but not in the {traced}, so no step is named for them "
            f"(not enough evidence: no traced build differed in them, nor did a step audit's replay): "
            f"{', '.join(unnamed[:LISTED])}{more}",)
