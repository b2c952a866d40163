"""Who wrote a file's bytes: provenance through renames, links and copies, anywhere.

A build often makes a file in one place and moves or copies it where it is compared:
`setup.py bdist_wheel` writes the wheel under /tmp and pip copies it into dist/;
`gen > x.tmp && mv x.tmp x`; `install -m644 build/x.so debian/tmp/...`. The trace records
each rename, link and copy (copy_file_range, sendfile) as a write with an origin; a copy by
plain reads and writes (`cat a > b`, a script's copy) is one when the process read a file
with the very bytes it wrote (`copies`, by the build's own digests). So the bytes of a file
lead back, hop by hop, to the process that produced them. An archive's differing members
lead back the same way to the files they were made from (`made_from`, given by the caller).

The writer of a step's differing output is the smallest process that produced it and can
be replayed alone (autom4te under autoreconf, one recipe line under debian/rules). A
process is replayed with its whole subtree, so "replayable" is a property of the subtree:
every file it read still holds what it read (no other process rewrote or removed it
afterwards), every file it looked for and missed is still missing (or, made by another
process later, can be taken away for the replay: `created_after_missed`; or it made the file
itself before any other process touched it: `made_after_missing`), the directories it
wrote into still exist, its standard input was not a pipe from another process, and it did
not use the network. Otherwise its parent is tried, up to the step itself.

The trace shows opens, not writes: dpkg-genbuildinfo opens debian/control for writing only
to lock it. So a plain open for writing after the read (no rename, link or copy onto the
file, no removal) counts as a rewrite only when the file changed after the read by what the
traced build's manifest says (`mtimes`: path → mtime_ns when it ended); a file opened for
writing and never written keeps its mtime, and its content.
"""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fuzzer.observe import EMPTY_DIGESTS
from fuzzer.trace.process_model import Access, Process
from fuzzer.trace.restore import NOTHING_KEPT, Kept, brought_back, handed_down
from fuzzer.trace.lineage import lowest_common
from fuzzer.trace.steps import BuildTrace, Step, command_of
from fuzzer.trace.tempnames import normalised

MAX_HOPS = 64  # renames and copies followed from one file (a cycle ends here too)
SHOWN_REASONS = 3
Copies = Mapping[str, tuple[str, int]]  # written file → (the file read with its bytes, the process that copied)
Mtimes = Mapping[str, int]  # path → its mtime_ns when the traced build ended (its manifest)
# File times come from the kernel's coarse clock, a tick (up to 10 ms) behind the trace's:
# a file whose mtime is this much before a read was last written before it
MTIME_SLACK_S = 0.05


@dataclass(frozen=True, slots=True)
class Event:
    """One write or delete of a path, by one process (its last time doing it)."""

    time: float
    kind: str  # write | delete
    process: int  # index in BuildTrace.processes
    origin: str | None  # a write by rename, link or copy: where its bytes came from


@dataclass(frozen=True, slots=True)
class Source:
    """Where a file's bytes were produced: the file first written with them, and by whom."""

    path: str
    process: Process
    time: float


@dataclass(frozen=True)
class Writer:
    """The unit a step's differing output is blamed on and replayed as: `process` and its
    descendants."""

    process: Process
    step: Step
    wrote: tuple[str, ...]  # the files whose bytes it produced, as this trace names them
    identity: str  # the same in every run of the build: no pid, no time
    passed_over: tuple[str, ...]  # smaller writers that could not be replayed alone, with why
    members: tuple[Process, ...]  # it and its descendants

    @property
    def is_step(self) -> bool:
        return self.process.index == self.step.members[0]

    @property
    def command(self) -> str:
        return command_of(_argv(self.process))

    @property
    def duration(self) -> float:
        """What one replay of it costs: its traced run time, children included."""
        return max(max(p.end for p in self.members) - self.process.start, 0.0)

    def not_replayable(self) -> str:
        """Why the smaller processes were not replayed alone ("" when none was passed over)."""
        shown = "; ".join(self.passed_over[:SHOWN_REASONS])
        more = f"; and {len(self.passed_over) - SHOWN_REASONS} more" if len(self.passed_over) > SHOWN_REASONS else ""
        return shown + more


@dataclass(frozen=True)
class _Index:
    events: dict[str, list[Event]]  # path → its writes and deletes, in time order
    children: dict[int, list[int]]  # process index → its children's
    step_of: dict[int, int]  # process index → the id of the step it is in


@functools.lru_cache(maxsize=8)  # a BuildTrace hashes by identity: one index per trace
def _index(trace: BuildTrace) -> _Index:
    events: dict[str, list[Event]] = defaultdict(list)
    children: dict[int, list[int]] = defaultdict(list)
    for proc in trace.processes:
        if proc.parent is not None:
            children[proc.parent].append(proc.index)
        for a in proc.accesses:
            if a.kind in ("write", "delete"):
                events[a.path].append(Event(a.last, a.kind, proc.index, a.origin))
    for history in events.values():
        history.sort(key=lambda e: e.time)
    return _Index(dict(events), dict(children), {i: step.id for step in trace.steps for i in step.members})


def content_source(trace: BuildTrace, path: str, copies: Copies = {}) -> Source | None:
    """Follow renames, links and copies back from the last write of `path` to the write
    that produced its bytes. None: nothing traced wrote it."""
    index = _index(trace)
    event = _last_write(index, path, float("inf"))
    for _ in range(MAX_HOPS):
        if event is None:
            return None
        origin = event.origin or _copied(copies, path, event)
        if origin is None or origin == path:
            return Source(path, trace.processes[event.process], event.time)
        earlier = _last_write(index, origin, event.time)
        if earlier is None:  # copied from a file nothing traced wrote (a source file)
            return Source(path, trace.processes[event.process], event.time)
        path, event = origin, earlier
    return None


def _copied(copies: Copies, path: str, event: Event) -> str | None:
    source, process = copies.get(path, (None, -1))
    return source if process == event.process else None


def copies(trace: BuildTrace, digests: Mapping[str, str]) -> dict[str, tuple[str, int]]:
    """Files a process wrote, by plain writes, with the bytes of a file it had read before
    (`digests`: path → content digest, the traced build's manifest): written file → (that file,
    the process)."""
    found = {}
    for proc in trace.processes:
        read: dict[str, tuple[str, float]] = {}
        for a in proc.accesses:
            if a.kind == "read" and digests.get(a.path, "") not in EMPTY_DIGESTS | {""}:
                read.setdefault(digests[a.path], (a.path, a.time))
        for a in proc.accesses:
            source, time = read.get(digests.get(a.path, ""), (None, 0.0)) if a.kind == "write" else (None, 0.0)
            if source is not None and source != a.path and a.origin is None and time <= a.last:
                found[a.path] = (source, proc.index)
    return found


def delivered_from(trace: BuildTrace, path: str) -> str | None:
    """For a file no step wrote: the file a step wrote that it was renamed or copied from,
    by processes outside every step (pip copying its wheel out of /tmp into dist/)."""
    index = _index(trace)
    event = _last_write(index, path, float("inf"))
    for _ in range(MAX_HOPS):
        if event is None or event.origin is None:
            return None
        if trace.writers(event.origin):
            return event.origin
        event = _last_write(index, event.origin, event.time)
    return None


def copied_input(trace: BuildTrace, step: Step, path: str) -> str | None:
    """The file another step wrote that this step renamed or copied onto `path` (`cp
    /tmp/out.whl dist/`): the bytes are that file's, so its writer is upstream of this step."""
    mine = set(step.members)
    writes = [e for e in _index(trace).events.get(path, ()) if e.kind == "write" and e.process in mine]
    origin = writes[-1].origin if writes else None
    if origin is None or origin == path:
        return None
    return origin if any(w is not step for w in trace.writers(origin)) else None


def writer_of(trace: BuildTrace, step: Step, paths: tuple[str, ...], made_from: Mapping[str, tuple[str, ...]] = {},
              copied: Copies = {}, mtimes: Mtimes = {}, kept: Kept = NOTHING_KEPT) -> Writer:
    """The smallest replayable process of `step` (a step of `trace`, with its processes)
    that produced the bytes of `paths` (files the step wrote, or files copied from them);
    the step's root when none smaller is. An archive of `made_from` stands for the files its
    differing members were made from, when the step wrote those (its packer did not make them)."""
    root = step.members[0]
    sources = byte_sources(trace, step, paths, made_from, copied)
    if not sources:
        return _writer(trace, step, root, (), ())
    common = lowest_common(trace, [s.process.index for s in sources], root)
    unit = root if common is None else common
    passed_over = []
    while unit != root:
        reason = _why_not_replayable(trace, unit, mtimes, kept) or _unopened(trace, unit, {s.path for s in sources})
        if reason is None:
            break
        proc = trace.processes[unit]  # where it ran, when not where its step did (a pip hook in /tmp)
        where = f" (in {proc.cwd})" if proc.cwd != step.cwd else ""
        passed_over.append(f"`{command_of(_argv(proc))}`{where} {reason}")
        unit = trace.processes[unit].parent  # type: ignore[assignment]  # below root: it has a parent
    return _writer(trace, step, unit, tuple(sorted({s.path for s in sources})), tuple(passed_over))


def byte_sources(trace: BuildTrace, step: Step, paths: tuple[str, ...], made_from: Mapping[str, tuple[str, ...]] = {},
                 copied: Copies = {}) -> list[Source]:
    """Where the bytes of `paths` were produced inside `step` (`writer_of`'s arguments)."""
    mine = set(step.members)
    found = lambda p: [s for s in [content_source(trace, p, copied)] if s is not None and s.process.index in mine]
    return [s for p in paths for s in ([s for m in made_from.get(p, ()) for s in found(m)] or found(p))]


def _unopened(trace: BuildTrace, unit: int, paths: set[str]) -> str | None:
    """Why `unit`'s subtree alone would not write `paths`: one was the standard output it was
    started with (`sh -c 'cd d && gen > x'`: the shell's fork opens x, then runs gen), or
    none of its processes opened one; its replay alone would print into its log."""
    printed = {a.path for a in trace.processes[unit].accesses if a.kind == "stdout"} & paths
    opened = {a.path for i in subtree(trace, unit) for a in trace.processes[i].accesses if a.kind == "write"}
    missing = sorted(printed | (paths - opened))
    return f"wrote {missing[0]} through the standard output it was started with" if missing else None


def _writer(trace: BuildTrace, step: Step, unit: int, wrote: tuple[str, ...], passed_over: tuple[str, ...]) -> Writer:
    proc = trace.processes[unit]
    members = tuple(trace.processes[i] for i in subtree(trace, unit))
    siblings = [trace.processes[i] for i in step.members]
    return Writer(proc, step, wrote, _identity(step, proc, siblings), passed_over, members)


def _identity(step: Step, proc: Process, siblings: list[Process]) -> str:
    """Step, command and cwd, and which of the step's processes with that command it is,
    temporary names blanked: the same process in every run."""
    command = command_of(_argv(proc))
    same = [p for p in siblings if p.cwd == proc.cwd and command_of(_argv(p)) == command]
    nth = next((i for i, p in enumerate(same) if p.index == proc.index), 0)
    occurrence = f" #{nth + 1}" if len(same) > 1 else ""
    text = f"{command} (in {proc.cwd}){occurrence}, inside step {step.command} (in {step.cwd})"
    return normalised(text)  # no temporary names either (`bdist_wheel -d /tmp/pip-wheel-…`)


def step_not_replayable(trace: BuildTrace, step: Step, mtimes: Mtimes = {}, kept: Kept = NOTHING_KEPT) -> str | None:
    """Why the whole step replayed alone would not see what it saw; None: it would."""
    return _why_not_replayable(trace, step.members[0], mtimes, kept) if step.members else "its processes were not traced"


def restored_inputs(trace: BuildTrace, members: Iterable[int], kept: Kept) -> dict[str, str]:
    """The removed inputs of the subtree of `members` (the root first) a replay puts back
    (`fuzzer.trace.restore`)."""
    if not kept:
        return {}
    members, index = list(members), _index(trace)
    step = index.step_of.get(members[0]) if members else None
    family = set(trace.steps[step].members) if step is not None else set(members)
    accesses = [(i, a) for i in members for a in trace.processes[i].accesses]
    return brought_back(index.events, accesses, kept, family)


def _why_not_replayable(trace: BuildTrace, unit: int, mtimes: Mtimes = {}, kept: Kept = NOTHING_KEPT) -> str | None:
    """Why `unit`'s subtree replayed alone would not see what it saw (`kept`: what a replay
    can put back of what was removed); None: it would."""
    proc = trace.processes[unit]
    if not proc.execs:
        return "is a fork of its parent that ran no program of its own"
    if proc.stdin_pipe:
        return "read its standard input from a pipe another process fed"
    below = subtree(trace, unit)
    members = [trace.processes[i] for i in below]
    if (online := next((p for p in members if p.network), None)) is not None:
        return f"used the network ({online.network})"
    index, inside = _index(trace), set(below)
    handed = handed_down(trace.processes, unit, below)  # made again by a replay, empty: what is in it is its own
    hidden = {*created_after_missed(trace, below), *restored_inputs(trace, below, kept), *handed}
    own = made_after_missing(trace, below)
    for member in members:
        for a in member.accesses:
            if a.path in hidden or (a.path in own and a.kind != "write") or a.path.startswith(tuple(f"{d}/" for d in handed)):
                continue
            reason = _lost(trace, index, inside, a.kind, a.path, a.time, a.found, mtimes)
            if reason:
                return reason
    return None


def created_after_missed(trace: BuildTrace, members: Iterable[int]) -> tuple[str, ...]:
    """Files of the tree that `members` looked for and missed, and another process created
    afterwards (cmake's `ninja -t restat` looks for the .ninja_log ninja writes later). A
    replay removes them first, as they were when it looked, and puts them back after it
    (fuzzer.explain.writer), so they do not make a process unreplayable. Not a file it also
    found, read or wrote: it may have waited for another process to make it."""
    index, inside = _index(trace), set(members)
    accesses = [a for i in sorted(inside) for a in trace.processes[i].accesses]
    seen = {a.path for a in accesses if a.found or a.kind not in ("probe", "list")}
    hidden = set()
    for a in accesses:
        if a.kind != "probe" or a.found or a.path in seen or a.path.startswith(("/", "../")):
            continue
        later = [e for e in index.events.get(a.path, ()) if e.process not in inside and e.time > a.time]
        if later and later[0].kind == "write":
            hidden.add(a.path)
    return tuple(sorted(hidden))


def made_after_missing(trace: BuildTrace, members: Iterable[int]) -> set[str]:
    """Files of the tree that `members` first looked for and missed, then made themselves
    before any other process touched them (`ar cru` probing the archive it creates, `install`
    its destination). A replay removes them first (`fuzzer.trace.absent`), so it sees them
    as the subtree did, whatever later processes did to them (ranlib, strip, dwz)."""
    index, inside = _index(trace), set(members)
    first: dict[str, Access] = {}
    made: dict[str, float] = {}
    for i in inside:
        for a in trace.processes[i].accesses:
            if a.path not in first or a.time < first[a.path].time:
                first[a.path] = a
            if a.kind == "write":
                made[a.path] = min(made.get(a.path, a.time), a.time)
    return {path for path, look in first.items()
            if look.kind == "probe" and not look.found and path in made and not path.startswith(("/", "../"))
            and not any(e.process not in inside and look.time < e.time < made[path]
                        for e in index.events.get(path, ()))}


def _lost(trace: BuildTrace, index: _Index, inside: set[int], kind: str, path: str, time: float,
          found: bool, mtimes: Mtimes = {}) -> str | None:
    """Whether what the subtree saw of `path` at `time` is gone: another process rewrote,
    removed or created it afterwards, or removed the directory it wrote into."""
    later = [e for e in index.events.get(path, ()) if e.process not in inside and e.time > time]
    if later and found and kind in ("read", "probe") and _unchanged_since(later, mtimes.get(path), time):
        return None
    if kind in ("read", "probe", "list") and later:
        other = command_of(_argv(trace.processes[later[0].process]))
        done = "removed" if later[0].kind == "delete" else "rewrote"
        if kind == "probe" and not found:  # removed: the subtree made it in between (ld its output)
            return f"looked for {path} before `{other}` {'created' if done == 'rewrote' else done} it"
        return f"read {path}, which `{other}` {done} afterwards"
    if kind == "write":
        for parent in _parents(path):
            gone = [e for e in index.events.get(parent, ()) if e.kind == "delete" and e.process not in inside]
            if gone and gone[-1].time > time:
                return f"wrote into {parent}, which `{command_of(_argv(trace.processes[gone[-1].process]))}` removed"
    return None


def _unchanged_since(later: list[Event], mtime_ns: int | None, time: float) -> bool:
    """Whether opens for writing after `time` left the file as it was: only plain opens (a
    rename, link or copy brings other bytes, keeping their mtime), and the file's last
    modification before `time`."""
    plain = all(e.kind == "write" and e.origin is None for e in later)
    return plain and mtime_ns is not None and mtime_ns < (time - MTIME_SLACK_S) * 1e9


def _last_write(index: _Index, path: str, before: float) -> Event | None:
    writes = [e for e in index.events.get(path, ()) if e.kind == "write" and e.time <= before]
    return writes[-1] if writes else None


def subtree(trace: BuildTrace, root: int) -> list[int]:
    """`root` and every process below it, by index."""
    children, found, stack = _index(trace).children, [], [root]
    while stack:
        i = stack.pop()
        found.append(i)
        stack.extend(children.get(i, ()))
    return sorted(found)


def _parents(path: str) -> list[str]:
    parents, parent = [], os.path.dirname(path)
    while parent and parent not in ("/", "."):
        parents.append(parent)
        parent = os.path.dirname(parent)
    return parents


def _argv(proc: Process) -> tuple[str, ...]:
    return proc.execs[0] if proc.execs else proc.argv
