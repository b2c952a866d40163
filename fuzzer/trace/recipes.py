"""The lines of a recipe that ran more than once at the same time.

A trace names steps, not recipes: make runs each line of a recipe as its own step. But
make starts a recipe's next line as soon as it reaps the line before, from the same make
process, so the line after a step is that process's first step to start after it ended.
Which line is a recipe's last cannot be told from one run (make may start another
recipe at once); from several runs of one recipe in one trace it can: the lines after
each run agree while they are the recipe's, and differ after (what make starts next is
some other recipe, or nothing). A run that stopped at a failed line ends the agreement:
the lines after it are not known to be the recipe's.
"""

from __future__ import annotations

from fuzzer.trace.steps import BuildTrace, Step

NEXT_LINE_S = 0.25  # make reaps a line and starts the next at once; a loaded machine delays it


def recipe_lines(traces: list[BuildTrace], command: str, cwd: str) -> list[list[Step]]:
    """Each run, in any trace, of the recipe one of whose lines is `command` in `cwd`, as
    its lines in order. Which lines are the recipe's is told by a trace that ran it more
    than once: the lines before and after it as far as those runs reach and agree (runs
    in separate traces are no evidence: make starts the same next recipe after it in every
    build). Without such a trace: only that line."""
    found = {id(t): [s for s in t.steps if (s.command, s.cwd) == (command, cwd)] for t in traces}
    before: tuple[tuple[str, str], ...] = ()
    after: tuple[tuple[str, str], ...] = ()
    for trace in traces:
        if len(runs := found[id(trace)]) > 1:
            before = max(before, _agreed([_neighbours(trace, s, backwards=True) for s in runs]), key=len)
            after = max(after, _agreed([_neighbours(trace, s, backwards=False) for s in runs]), key=len)
    return [[*reversed(_matching(_neighbours(t, s, backwards=True), before)), s,
             *_matching(_neighbours(t, s, backwards=False), after)] for t in traces for s in found[id(t)]]


def _agreed(runs: list[list[Step]]) -> tuple[tuple[str, str], ...]:
    """The lines (command, cwd) every run has, in the same places, from the nearest on."""
    agreed = []
    for lines in zip(*runs):
        if len({_line(step) for step in lines}) > 1:
            break
        agreed.append(_line(lines[0]))
    return tuple(agreed)


def _matching(steps: list[Step], lines: tuple[tuple[str, str], ...]) -> list[Step]:
    """`steps` as far as they are the recipe's `lines`."""
    kept = []
    for step, line in zip(steps, lines):
        if _line(step) != line:
            break
        kept.append(step)
    return kept


def _neighbours(trace: BuildTrace, step: Step, backwards: bool) -> list[Step]:
    """The steps the same process ran right after `step` (before it, `backwards`), nearest
    first, each started as soon as the one before it ended, which succeeded (make stops a
    recipe at its first failing line)."""
    launcher = _launcher(trace, step)
    siblings = [s for s in trace.steps if s is not step and _launcher(trace, s) == launcher]
    lines, last = [], step
    while (near := _next_to(siblings, last, backwards)) is not None:
        first, second = (near, last) if backwards else (last, near)
        if first.failed or second.start - first.end > NEXT_LINE_S:
            break
        lines.append(near)
        last = near
    return lines


def _next_to(siblings: list[Step], step: Step, backwards: bool) -> Step | None:
    if backwards:
        return max((s for s in siblings if s.end <= step.start), key=lambda s: s.end, default=None)
    return min((s for s in siblings if s.start >= step.end), key=lambda s: s.start, default=None)


def _launcher(trace: BuildTrace, step: Step) -> int | None:
    return trace.processes[step.members[0]].parent if step.members else None


def _line(step: Step) -> tuple[str, str]:
    return step.command, step.cwd
