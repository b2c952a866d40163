"""Which of the files a step (or a process subtree) wrote were absent when it started, as
far as the trace tells: what a replay removes first, so that it starts where the step did.

A file counts as absent when the step's first look at it, before its first write, found
nothing (`[ -e out ] || gen > out`, cmake probing its cache); or, when the step never
looked before writing, when the last thing any other process did to it before the step
started says so (make's stat of the target failed, an earlier step deleted it). A file
no process looked at before the step wrote it is not known absent: it may have come with
the source, and is left as the replay's restore puts it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from fuzzer.trace.processes import Process
from fuzzer.trace.steps import BuildTrace

LOOKS = ("read", "probe")
TELLING = ("read", "write", "delete", "probe")  # accesses after which the trace knows whether the file is there


class Absence:
    """Answers for one trace; the index of every process's accesses is made once, when first needed."""

    def __init__(self, trace: BuildTrace):
        self.trace = trace
        self._events: dict[str, list[tuple[float, bool, int]]] | None = None

    def created(self, own: Iterable[Process], start: float, written: Iterable[str]) -> tuple[str, ...]:
        """Of `written`, the files absent when `own` (the step's processes) started at `start`."""
        own = list(own)
        mine = {p.index for p in own}
        accesses = defaultdict(list)
        for proc in own:
            for access in proc.accesses:
                accesses[access.path].append(access)
        absent = []
        for path in sorted(set(written)):
            writes = [a.time for a in accesses[path] if a.kind == "write"]
            first_write = min(writes, default=float("inf"))
            looks = sorted((a for a in accesses[path] if a.kind in LOOKS and a.time <= first_write),
                           key=lambda a: a.time)
            present = looks[0].kind == "read" or looks[0].found if looks else self._present_before(path, start, mine)
            if present is False:
                absent.append(path)
        return tuple(absent)

    def _present_before(self, path: str, start: float, mine: set[int]) -> bool | None:
        """What the last access to `path` by another process before `start` says; None: no access."""
        if self._events is None:
            self._events = self._index()
        before = [(time, present) for time, present, index in self._events.get(path, ()) if time < start
                  and index not in mine]
        return max(before)[1] if before else None

    def _index(self) -> dict[str, list[tuple[float, bool, int]]]:
        """path → (time, whether the file was there after, process index), at each access's first
        and last time (the trace keeps no times in between)."""
        events: dict[str, list[tuple[float, bool, int]]] = defaultdict(list)
        for proc in self.trace.processes:
            for a in proc.accesses:
                if a.kind in TELLING:
                    present = a.kind in ("read", "write") or (a.kind == "probe" and a.found)
                    for time in {a.time, a.last}:
                        events[a.path].append((time, present, proc.index))
        return events
