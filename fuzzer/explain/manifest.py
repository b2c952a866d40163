"""Manifest hazards: conflicts the campaign's own failing or divergent runs show.

A hazard is latent while the schedule happens not to trip it. It is `manifest`, citing
the runs, when the campaign's runs show the conflict itself:

- a run where one of the files two steps both wrote (write-write, a recipe running
  several times at once) differs from the reference, while some other run rebuilt that
  file with the reference's bytes (a file that differs in every build differs for a
  reason of its own);
- a failed run whose error lines say one of the hazard's files was missing (`parser.h:
  No such file or directory`): the step that needed it ran before its writer;
- for a recipe running several times at once, a failed run whose failing target (make's
  `*** [main.o] Error 1`) is one of its files or the output of a step that read one
  (in the traced reference): a compile that read a half-rewritten header fails with
  `'OP_ADD' undeclared`, naming no file of the recipe;
- the traced divergent run, when a root step of the divergence is one of the hazard's
  steps and saw one of its files differently because of how the steps interleaved
  (missing in one run, read before or after its writer, written by both, or looked at
  in one run only while another step wrote it).

`confirmed` stays what it was: a targeted run made the conflict manifest on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from msgspec import structs

from fuzzer.compare import Comparison
from fuzzer.execute.logs import any_target_of, failed_targets
from fuzzer.model import Hazard, HazardStatus
from fuzzer.trace.differences import ONE_RUN, RACE_EVIDENCE, InputDifference
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.hazards import DUPLICATE, WRITE_WRITE
from fuzzer.trace.steps import BuildTrace

MISSING = re.compile(r"no such file|not found|cannot find|can't open|cannot open|does not exist|nonexistent",
                     re.IGNORECASE)


def mark_manifest(hazards: Iterable[Hazard], comparison: Comparison, error_lines: Mapping[int, str],
                  roots: Iterable[RootCandidate] = (), traced_label: str = "",
                  reference: BuildTrace | None = None) -> tuple[Hazard, ...]:
    """`hazards` with those the runs show marked manifest. `error_lines`: failed run →
    its log's error lines; `roots`: the divergence's root steps in the traced run
    `traced_label`; `reference`: a trace that says which steps read which files."""
    differing = _differing_by_run(comparison)
    roots = list(roots)
    out = []
    for hazard in hazards:
        runs = [*_by_outputs(hazard, differing), *_by_failures(hazard, error_lines),
                *_by_failed_readers(hazard, error_lines, reference)]
        traced = [traced_label] if traced_label and _by_roots(hazard, roots) else []
        shown = (runs or traced) and hazard.status == HazardStatus.LATENT
        out.append(_manifest(hazard, list(dict.fromkeys(runs)), traced) if shown else hazard)
    return tuple(out)


def _manifest(hazard: Hazard, runs: list[int], traced: list[str]) -> Hazard:
    shown = [*(f"run {r}" for r in runs), *traced]
    return structs.replace(hazard, status=HazardStatus.MANIFEST, runs=list(dict.fromkeys([*hazard.runs, *runs])),
                           traced=list(dict.fromkeys([*hazard.traced, *traced])),
                           evidence=f"{hazard.evidence}; manifest: the conflict shows in {', '.join(shown)}")


def _files(hazard: Hazard) -> list[str]:
    return hazard.files or [hazard.file]


def _differing_by_run(comparison: Comparison) -> dict[str, tuple[list[int], bool]]:
    """Artifact → (runs whose variant is not the reference's, whether another run matched the reference)."""
    out = {}
    for artifact in comparison.divergent:
        reference = next((v for v in artifact.variants if comparison.reference in v.runs), None)
        if reference is None:
            continue
        others = [r for v in artifact.variants if v is not reference for r in v.runs]
        out[artifact.path] = (others, len(reference.runs) > 1)
    return out


def _by_outputs(hazard: Hazard, differing: Mapping[str, tuple[list[int], bool]]) -> list[int]:
    if hazard.type not in (WRITE_WRITE, DUPLICATE):
        return []
    runs = {r for f in _files(hazard) if f in differing and differing[f][1] for r in differing[f][0]}
    return sorted(runs)


def _by_failures(hazard: Hazard, error_lines: Mapping[int, str]) -> list[int]:
    names = [_word(f.rstrip("/").rsplit("/", 1)[-1]) for f in _files(hazard)]
    return [run for run, text in sorted(error_lines.items())
            if any(MISSING.search(line) and any(n.search(line) for n in names) for line in text.splitlines())]


def _by_failed_readers(hazard: Hazard, error_lines: Mapping[int, str], reference: BuildTrace | None) -> list[int]:
    """Failed runs whose failing target is a file of a recipe that ran several times at
    once, or an output of a step that read one."""
    if hazard.type != DUPLICATE or reference is None:
        return []
    files = set(_files(hazard))
    made = files | {out for step in reference.steps if files & step.inputs for out in step.writes}
    return [run for run, text in sorted(error_lines.items()) if any_target_of(failed_targets(text), made)]


def _word(name: str) -> re.Pattern[str]:
    """`parser.h` as a file name in a log line: not `xparser.h`, not `parser.hpp`."""
    return re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)")


def _by_roots(hazard: Hazard, roots: list[RootCandidate]) -> bool:
    files = {f.rstrip("/") for f in _files(hazard)}
    return any(root.command in hazard.steps and (root.failed or root.outputs)
               and any(_raced(d) and d.file in files for d in root.input_differences) for root in roots)


def _raced(difference: InputDifference) -> bool:
    """Seen differently because of the interleaving (a file looked at in one run only counts
    when another step wrote it: a listing that missed it)."""
    return difference.how in RACE_EVIDENCE or (difference.how == ONE_RUN and difference.other is not None)
