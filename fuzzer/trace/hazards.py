"""Hazards: conflicts between steps that could have run at the same time.

A conflict is two steps touching one file in a way whose outcome depends on their order:
a read and a write, two writes (or a write and a delete), a directory created while
another step writes into it, a listing while another step adds to the directory.

Most conflicts are normal build behaviour: `ar` then `ranlib`, `rm -f x` then `ln -s`,
a compile then `mv`. They are lines of one recipe, or steps the build graph orders, and
they never run at once. So a conflict becomes a hazard only with evidence that its two
steps were not ordered:

- they overlapped in time in some traced run (a build tool starts a step only after
  everything it is ordered after has finished), or
- the same two steps ran in opposite orders in two different traced runs.

Steps are identified across runs by command, cwd and occurrence: the k-th run of one
recipe in the order the build launched them (a hold delays a step after its launch, so
it does not change which run is which). Two runs of one recipe therefore never "swap":
the earlier-launched is run 1 in every trace. Steps nested in one another (a step that
runs a sub-make) are ordered by ancestry, and steps the build's declared graph orders
(`fuzzer.trace.declared`: make's database, ninja's graph) are never a hazard.

Each hazard names the traced runs its evidence rests on (`traced`: one run that showed the
overlap, or the two distinct runs that showed both orders). Hazards are grouped by file,
except that a recipe running several times at once is one hazard listing every file it
writes, with every hazard on those files that names it. A
hazard is the report's own (`fuzzer.model.Hazard`): `writer` is the step that went first in
the conflict, `reader` the second.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from msgspec import structs

from fuzzer.model import Hazard, HazardType
from fuzzer.trace.differences import in_workspace
from fuzzer.trace.recipes import recipe_lines
from fuzzer.trace.steps import BuildTrace, Step, StepKey

READ_BEFORE_WRITE, WRITE_WRITE, DUPLICATE, MKDIR_RACE, LISTING_RACE = HazardType
PRIORITY = (DUPLICATE, WRITE_WRITE, MKDIR_RACE, LISTING_RACE, READ_BEFORE_WRITE)  # most specific first

OVERLAP = "overlap"  # both were running at once
BEFORE = "before"  # the first step was done before the second started
AFTER = "after"  # the second step was done before the first started
DIRNAME_CACHE = 1 << 16


@dataclass(frozen=True, slots=True)
class _Conflict:
    type: HazardType
    file: str
    first: Step
    second: Step
    relation: str
    detail: str
    used: bool = True  # listing: the lister went on to use the file

    @property
    def missed(self) -> bool:
        """Read-before-write: the reader looked (a probe) before the file existed."""
        return self.type == READ_BEFORE_WRITE and self.second.found(self.file) is False

    @property
    def key(self) -> tuple[str, str, StepKey, StepKey]:
        """The same conflict in another run: the same two steps (the k-th run of a recipe
        is the k-th in every run) on the same file."""
        return (self.type, self.file, self.first.key, self.second.key)


@dataclass(frozen=True, slots=True)
class _Sighting:
    run: int  # index of the traced run
    label: str
    conflict: _Conflict


class Ordering(Protocol):
    """What the build declares (`fuzzer.trace.declared`): whether its graph orders two steps."""

    def orders(self, a: Step, b: Step) -> bool: ...


def find_hazards(traces: list[BuildTrace], labels: list[str] | None = None,
                 declared: Ordering | None = None, campaign_runs: dict[str, int] | None = None) -> list[Hazard]:
    """Unordered conflicts over every traced run, grouped by file (a recipe running several
    times at once: by recipe). `declared`: the build's own graph; the steps it orders are
    never a hazard. `campaign_runs`: the labels of traces that are the campaign's own runs
    (a held run), by label: a hazard names those by number (`runs`), the others by label."""
    labels = distinct_labels(labels or [f"traced run {i + 1}" for i in range(len(traces))])
    seen: dict[tuple, list[_Sighting]] = {}
    for run, (label, trace) in enumerate(zip(labels, traces)):
        for conflict in conflicts(trace):
            if declared is None or not declared.orders(conflict.first, conflict.second):
                seen.setdefault(conflict.key, []).append(_Sighting(run, label, conflict))
    unordered = [(s, why) for s in seen.values() if any(x.conflict.used for x in s) and (why := _unordered(s))]
    return _by_recipe(_grouped(unordered, campaign_runs or {}), functools.partial(_recipe_of, traces))


def distinct_labels(labels: list[str]) -> list[str]:
    """Two traced runs of one perturbation get one label each: evidence that names two runs
    must show two runs."""
    seen: dict[str, int] = {}
    numbered = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        numbered.append(f"{label} #{seen[label]}" if labels.count(label) > 1 else label)
    return numbered


def conflicts(trace: BuildTrace) -> Iterator[_Conflict]:
    yield from _write_write(trace)
    yield from _read_write(trace)
    yield from _mkdir_races(trace)
    yield from _listing_races(trace)


def relation(trace: BuildTrace, a: Step, b: Step) -> str | None:
    """How two steps stood in time in one run; None when one runs inside the other."""
    if _encloses(trace, a, b) or _encloses(trace, b, a):
        return None
    if a.end <= b.start:
        return BEFORE
    if b.end <= a.start:
        return AFTER
    return OVERLAP


@dataclass(frozen=True, slots=True)
class _Evidence:
    text: str
    runs: tuple[str, ...]  # distinct labels


def _unordered(sightings: list[_Sighting]) -> _Evidence | None:
    """The evidence that the pair was not ordered, or None: an overlap in one run, or
    both orders in two different runs."""
    overlap = next((s for s in sightings if s.conflict.relation == OVERLAP), None)
    if overlap is not None:
        return _Evidence(f"not ordered: they ran at the same time in the {overlap.label}", (overlap.label,))
    befores = [s for s in sightings if s.conflict.relation == BEFORE]
    afters = [s for s in sightings if s.conflict.relation == AFTER]
    before, after = next(((b, a) for b in befores for a in afters if a.run != b.run), (None, None))
    if before is None or after is None:
        return None
    c = before.conflict
    return _Evidence(f"not ordered: they ran in opposite orders (`{_short(c.first.command)}` first in the "
                     f"{before.label}, `{_short(c.second.command)}` first in the {after.label})",
                     (before.label, after.label))


def _grouped(unordered: list[tuple[list[_Sighting], _Evidence]],
             campaign_runs: dict[str, int]) -> list[tuple[Hazard, tuple[str, str] | None]]:
    """One hazard per file: its most specific conflict is shown (a recipe running twice
    explains the reads of its half-written output), and every step involved is named.
    Each comes with its recipe (command, cwd) when it is a recipe running several times."""
    by_file: dict[str, list[tuple[_Sighting, _Evidence]]] = {}
    for sightings, why in unordered:
        shown = min(sightings, key=lambda s: (s.conflict.relation != OVERLAP, not s.conflict.missed, -s.run))
        by_file.setdefault(shown.conflict.file, []).append((shown, why))
    hazards = []
    for path, members in sorted(by_file.items()):
        members.sort(key=lambda m: (_specificity(m[0].conflict), m[0].conflict.first.key, m[0].conflict.second.key))
        shown, why = members[0]
        c = shown.conflict
        names = {n for m in members for n in (m[0].conflict.first.command, m[0].conflict.second.command)}
        hazard = Hazard(c.type, path, reader=c.second.command, writer=c.first.command,
                        detail=f"{shown.label}: {c.detail}", evidence=why.text, steps=sorted(names), files=[path],
                        runs=[campaign_runs[r] for r in why.runs if r in campaign_runs],
                        traced=[r for r in why.runs if r not in campaign_runs])
        hazards.append((hazard, (c.first.command, c.first.cwd) if c.type == DUPLICATE else None))
    return hazards


def _specificity(conflict: _Conflict) -> float:
    """PRIORITY's rank; a step that probed the very file and found it missing (a `stat`,
    `access`, failed `open`) raced its writer directly: that read-before-write comes
    before a listing of the directory the same step made."""
    if conflict.type == READ_BEFORE_WRITE and conflict.missed:
        return PRIORITY.index(LISTING_RACE) - 0.5
    return PRIORITY.index(conflict.type)


@dataclass(frozen=True)
class Recipe:
    """A recipe that ran several times at once, over every trace (`fuzzer.trace.recipes`)."""

    first: tuple[str, str]  # its first line (command, cwd): the recipe's name
    lines: frozenset[str]  # the commands of its lines
    files: frozenset[str]  # the workspace files any of its lines wrote


def _by_recipe(hazards: list[tuple[Hazard, tuple[str, str] | None]],
               recipe_of: Callable[[tuple[str, str]], Recipe]) -> list[Hazard]:
    """A recipe running several times at once is one cause: every hazard on a file it
    writes that names one of its lines (its duplicates, a compile reading its half-written
    output, a file the last run never got to rewrite in a build that failed) becomes one
    hazard, listing every file the recipe's lines write and every line: a generator's
    temporaries, the `mv` of them into place, the `ar` after are one recipe."""
    recipes: dict[tuple[str, str], Recipe] = {}
    shown: dict[tuple[str, str], Hazard] = {}  # recipe → its first duplicate, the one shown
    for hazard, line in hazards:
        if line is not None:
            recipe = recipe_of(line)
            recipes.setdefault(recipe.first, recipe)
            shown.setdefault(recipe.first, structs.replace(hazard, steps=sorted({*hazard.steps, *recipe.lines})))
    out: list[Hazard] = []
    merged: dict[tuple[str, str], int] = {}  # recipe → its hazard's place in `out`
    for hazard, _ in hazards:
        key = next((r.first for r in recipes.values() if hazard.file in r.files and r.lines.intersection(hazard.steps)),
                   None)
        if key is None:
            out.append(hazard)
            continue
        if key not in merged:
            merged[key] = len(out)
            out.append(shown[key])
        kept = out[merged[key]]
        out[merged[key]] = structs.replace(
            kept, files=list(dict.fromkeys((*kept.files, *hazard.files))), steps=sorted({*kept.steps, *hazard.steps}),
            runs=list(dict.fromkeys((*kept.runs, *hazard.runs))),
            traced=list(dict.fromkeys((*kept.traced, *hazard.traced))))
    for key, at in merged.items():  # the files in conflict first (`file` is the first), then the rest it wrote
        everything = [*out[at].files, *sorted(recipes[key].files - set(out[at].files))]
        out[at] = structs.replace(out[at], files=everything,
                                  detail=f"{out[at].detail}, each run writing {', '.join(everything)}")
    return out


def _recipe_of(traces: list[BuildTrace], line: tuple[str, str]) -> Recipe:
    runs = recipe_lines(traces, *line)
    steps = [step for run in runs for step in run]
    return Recipe((runs[0][0].command, runs[0][0].cwd) if runs else line, frozenset(s.command for s in steps),
                  frozenset(p for s in steps for p in s.writes if in_workspace(p)))


# --- conflicts in one trace ---------------------------------------------------------------


def _write_write(trace: BuildTrace) -> Iterator[_Conflict]:
    """Two steps writing (or one writing, one deleting) a file; the same command twice is a
    recipe executed twice."""
    touched: dict[str, list[Step]] = {}
    for step in trace.steps:
        for path in step.writes.keys() | step.deletes.keys():
            if in_workspace(path):
                touched.setdefault(path, []).append(step)
    for path, steps in touched.items():
        for a, b in _pairs(steps):
            if path not in a.writes and path not in b.writes:
                continue
            if a.key > b.key:
                a, b = b, a  # one orientation, so runs can be compared
            how = relation(trace, a, b)
            if how is None:
                continue
            if (a.command, a.cwd) == (b.command, b.cwd):
                times = sum(1 for s in steps if (s.command, s.cwd) == (a.command, a.cwd))
                detail = f"`{a.command}` ran {times} times ({_span(trace, a)}, {_span(trace, b)})"
                yield _Conflict(DUPLICATE, path, a, b, how, detail)
            else:
                detail = f"`{a.command}` ({_span(trace, a)}) and `{b.command}` ({_span(trace, b)}) both changed it"
                yield _Conflict(WRITE_WRITE, path, a, b, how, detail)


ALL_PAIRS_UP_TO = 64  # writers of one file; beyond, overlapping pairs and neighbours only


def _pairs(steps: list[Step]) -> Iterator[tuple[Step, Step]]:
    """Every pair of a file's writers, so two runs that disagree on the order of any two
    can be seen to (a shuffled append order rarely keeps the same neighbours). Past
    ALL_PAIRS_UP_TO writers: overlapping pairs and neighbours in start order, not quadratic."""
    ordered = sorted(steps, key=lambda s: s.start)
    if len(ordered) <= ALL_PAIRS_UP_TO:
        yield from ((a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :])
        return
    seen = set()
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            if b.start >= a.end and b is not ordered[i + 1]:
                break
            if (a.id, b.id) not in seen:
                seen.add((a.id, b.id))
                yield a, b


def _read_write(trace: BuildTrace) -> Iterator[_Conflict]:
    """A step looked at a file another step writes."""
    writers_of = trace.writers_of
    for reader in trace.steps:
        for path in reader.inputs:
            if path not in writers_of or not in_workspace(path):  # most inputs are nobody's output
                continue
            for writer in writers_of[path]:
                how = relation(trace, writer, reader) if writer is not reader else None
                if how is not None:
                    look = reader.first_look(path)
                    detail = (f"`{reader.command}` looked at it at +{look - trace.start:.3f}s "
                              f"({'found' if reader.found(path) else 'missing'}); `{writer.command}` wrote it "
                              f"({_span(trace, writer)})")
                    yield _Conflict(READ_BEFORE_WRITE, path, writer, reader, how, detail)


def _mkdir_races(trace: BuildTrace) -> Iterator[_Conflict]:
    """A step was already running when another created the directory it then wrote into.
    A step that checks or creates the directory itself (`mkdir -p obj && cc -o obj/x.o`)
    does not depend on the other."""
    created = {d: (m, t) for m in trace.steps for d, t in m.mkdirs.items() if in_workspace(d)}
    if not created:  # most builds: no step made a directory
        return
    directories = functools.lru_cache(DIRNAME_CACHE)(os.path.dirname)  # steps touch the same files
    for step in trace.steps:
        for path in step.writes.keys() | {p for p, probe in step.probes.items() if not probe.found}:
            directory = directories(path)
            maker, made = created.get(directory, (None, 0.0))
            if maker is None or maker is step or step.first_look(directory) is not None:
                continue
            if relation(trace, maker, step) is None:
                continue
            how = AFTER if step.end <= maker.start else OVERLAP if step.start < made else BEFORE
            detail = (f"`{step.command}` started at +{step.start - trace.start:.3f}s; `{maker.command}` created "
                      f"{directory}/ at +{made - trace.start:.3f}s")
            yield _Conflict(MKDIR_RACE, directory + "/", maker, step, how, detail)


def _listing_races(trace: BuildTrace) -> Iterator[_Conflict]:
    """A step listed a directory (a glob, `ls`, an archive) while a step not ordered with
    it created a file there; only files the lister then used count."""
    created: dict[str, list[tuple[str, Step]]] = {}
    for writer in trace.steps:
        for path in writer.writes:
            if in_workspace(path):
                created.setdefault(os.path.dirname(path) or ".", []).append((path, writer))
    for lister in trace.steps:
        for directory, listed in lister.lists.items():
            for path, writer in created.get(directory, ()):
                if writer is lister or relation(trace, writer, lister) is None:
                    continue
                how = BEFORE if writer.end <= listed else AFTER if lister.end <= writer.start else OVERLAP
                used = path in lister.reads or path in lister.probes
                detail = (f"`{lister.command}` listed {directory}/ at +{listed - trace.start:.3f}s; "
                          f"`{writer.command}` created {path} ({_span(trace, writer)})")
                yield _Conflict(LISTING_RACE, path, writer, lister, how, detail, used)


# --- helpers ------------------------------------------------------------------------------


def _encloses(trace: BuildTrace, outer: Step, inner: Step) -> bool:
    sid = inner.outer
    while sid is not None:
        if sid == outer.id:
            return True
        sid = trace.steps[sid].outer
    return False


def _span(trace: BuildTrace, step: Step) -> str:
    return f"+{step.start - trace.start:.3f}s to +{step.end - trace.start:.3f}s"


def _short(command: str, limit: int = 80) -> str:
    return command if len(command) <= limit else command[: limit - 1] + "…"
