"""Which removed files a replay puts back: the inputs a process subtree read that a process
outside it removed (or renamed another file over) before the build ended, whose bytes the
traced build kept (`fuzzer.execute.keep`).

pip's backend hook reads `input.json` in a temporary directory pip deletes afterwards; a
configure check's compile reads a source its driver removes. Replayed on the final tree
they would miss it; with the version they read put back at its path, they see what they
saw. The version is the one kept at the first removal after the last read: nothing touched
the file in between, or it is not the version read. Only files another step, a driver
(pip, meson, cmake's build tool) or nothing traced wrote are put back: a file written
inside the same step is that step's own intermediate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

# path as the trace names it → (when its bytes were kept, where they are, when they were last
# modified), in time order; all times the realtime clock's, in seconds
Kept = Mapping[str, tuple[tuple[float, str, float], ...]]
NOTHING_KEPT: Kept = {}
# The keep reads the clock just before the removal, strace its own just after entering it
CLOCK_SLACK_S = 0.05


class _Event(Protocol):
    time: float
    kind: str
    process: int
    origin: str | None


class _Access(Protocol):
    kind: str
    path: str
    time: float
    last: float
    found: bool


def kept_of(entries: Iterable[tuple[float, str, str, float]], name, where) -> dict[str, tuple[tuple[float, str, float], ...]]:
    """`entries` (when kept, absolute path, digest, mtime) as a `Kept`: `name(path)` the
    trace's name for a path (None: not the build's), `where(digest)` the kept bytes' file."""
    kept: dict[str, list[tuple[float, str, float]]] = {}
    for time, path, digest, modified in entries:
        named = name(path)
        if named is not None:
            kept.setdefault(named, []).append((time, where(digest), modified))
    return {path: tuple(sorted(versions)) for path, versions in kept.items()}


def brought_back(events: Mapping[str, Sequence[_Event]], accesses: Iterable[tuple[int, _Access]],
                 kept: Kept, step: set[int]) -> dict[str, str]:
    """Of the subtree's `accesses` ((process index, access)), the files it read or found that
    a removal took away after its last look and that were still gone when the build ended,
    kept: path → the kept file to put back. `events`: each path's writes and deletes in time
    order (`fuzzer.trace.writers`); `step`: the processes of the step it is in. A file a
    process of that step wrote is never put back: its variation may come from that process
    (gcc's cc1 writes the /tmp/cc*.s that `as` reads and gcc removes: `as` alone is not the
    compile), and a replay of the whole step makes it again."""
    accesses = list(accesses)
    looked: dict[str, tuple[float, float]] = {}
    for _, a in accesses:
        if a.kind in ("read", "probe") and a.found and a.path in kept:
            first, last = looked.get(a.path, (a.time, a.last))
            looked[a.path] = (min(first, a.time), max(last, a.last))
    back = {}
    for path, (first, last) in looked.items():
        if any(e.kind == "write" and e.process in step for e in events.get(path, ())):
            continue
        later = [e for e in events.get(path, ()) if e.time > first]
        if not later or not _removal(later[0]) or later[0].time < last or later[-1].kind != "delete":
            continue  # rewritten after the read, or there when the build ended
        # a link keeps the inode: bytes written to it after the read (through a descriptor
        # still open) show in its mtime, and are not what was read
        version = [where for time, where, modified in kept[path]
                   if last - CLOCK_SLACK_S <= time <= later[0].time + CLOCK_SLACK_S and modified <= last]
        if version:
            back[path] = version[0]
    return back


def _removal(event: _Event) -> bool:
    """A delete, or a rename or link over the file (its old bytes were kept then)."""
    return event.kind == "delete" or (event.kind == "write" and event.origin is not None)


def handed_down(processes: Sequence, unit: int, subtree: Iterable[int]) -> tuple[str, ...]:
    """Directories the subtree of `unit` found that a process it descends from made before
    it started and removed after it ended (autoreconf's TMPDIR, `/tmp/arXXXXXX`, which every
    autoconf and autom4te below it looks into): a replay of the subtree makes them, empty,
    first. What the subtree put in them is its own; what is not is its ancestor's, which a
    replay of the subtree does not see (the writer then stays the larger unit)."""
    proc, ancestors = processes[unit], []
    while (parent := processes[proc.parent] if proc.parent is not None else None) is not None:
        ancestors.append(parent)
        proc = parent
    made = {a.path for p in ancestors for a in p.accesses if a.kind == "mkdir" and a.time <= processes[unit].start}
    gone = {a.path for p in ancestors for a in p.accesses if a.kind == "delete" and a.time >= processes[unit].end}
    looked = {a.path for i in subtree for a in processes[i].accesses if a.kind in ("probe", "read", "list") and a.found}
    return tuple(sorted(made & gone & looked))
