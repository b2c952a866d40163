"""Steps: the commands a build driver launched, with everything their subtree touched.

A driver is the build's root process or any make/ninja/scons/dune/`cmake --build`/`meson
compile` (test, benchmark) process, also when a wrapper of that name execs it (a shim). `meson setup`, like `cmake -S` or `./configure`, is a
step: it writes its own files (meson-private/coredata.dat, meson-logs/), and its compiler
checks are its processes. A step is the process subtree rooted at a child of a driver, minus deeper
drivers' subtrees: under `make` → `$(MAKE) -C sub`, the sub-make's children are the
steps, not the sub-make. Drivers' own accesses (make stats every target) belong to no
step.

Steps are matched across runs by `key`: command, cwd, and how many steps with that
same command and cwd started before it, temporary names blanked (fuzzer/trace/tempnames.py).
"""

from __future__ import annotations

import contextlib
import gc
import os
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fuzzer.trace.joiner import joined_calls
from fuzzer.trace.processes import Access, Process, track_calls
from fuzzer.trace.tempnames import identity

DRIVERS = frozenset({"make", "gmake", "bmake", "ninja", "samu", "scons", "dune"})  # dune runs its compiles itself
MESON_DRIVING = frozenset({"compile", "test", "benchmark"})  # meson subcommands that run ninja or the tests
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})

StepKey = tuple[str, str, int]


@dataclass(frozen=True, slots=True, eq=False)
class Step:
    id: int  # index in BuildTrace.steps (start order)
    argv: tuple[str, ...]  # what the driver ran: the step root's first exec
    command: str  # LINE for `sh -c LINE`, else the shell-quoted argv
    cwd: str  # workspace-relative ("." for the root), absolute if outside
    start: float
    end: float
    exit_code: int | None
    signal: str | None
    pids: tuple[int, ...]
    reads: dict[str, float]  # file → first read time
    probes: dict[str, Access]  # file → first probe (its `time` and `found`)
    writes: dict[str, float]  # file → last write time
    deletes: dict[str, float]  # file → last delete time
    mkdirs: dict[str, float]  # directory → first mkdir time
    lists: dict[str, float]  # directory → first listing time
    read_order: tuple[str, ...]  # files in the order first read
    inputs: frozenset[str]  # files read or probed before this step wrote them itself
    leaf: dict[str, tuple[str, ...]]  # written file → argv of the process that wrote it
    key: StepKey  # the same step in every run: `identity` of command and cwd, and its occurrence among them
    outer: int | None  # id of the step that launched the driver that launched this one
    env: tuple[str, ...] | None = None  # the step root's environment as traced ("NAME=value")
    members: tuple[int, ...] = ()  # indexes of its processes in BuildTrace.processes, the root first

    @property
    def occurrence(self) -> int:
        """Among earlier steps with the same command and cwd."""
        return self.key[2]

    @property
    def failed(self) -> bool:
        return self.signal is not None or self.exit_code not in (0, None)

    @property
    def outputs(self) -> frozenset[str]:
        """Files written and still there when the step ended (not deleted or renamed away)."""
        return frozenset(f for f, t in self.writes.items() if self.deletes.get(f, -1.0) < t)

    def first_look(self, path: str) -> float | None:
        """When the step first read or probed the file (None: never)."""
        probe = self.probes.get(path)
        times = [t for t in (self.reads.get(path), probe.time if probe else None) if t is not None]
        return min(times, default=None)

    def found(self, path: str) -> bool | None:
        """Whether the file existed when this step first looked (None: never looked)."""
        probe = self.probes.get(path)
        read = self.reads.get(path)
        if probe is not None and (read is None or probe.time <= read):
            return probe.found
        return True if read is not None else None


@dataclass(frozen=True, slots=True, eq=False)
class BuildTrace:
    workspace: str
    processes: tuple[Process, ...]
    steps: tuple[Step, ...]
    by_key: dict[StepKey, Step]
    writers_of: dict[str, tuple[Step, ...]]  # file → steps that wrote it, in start order

    @property
    def start(self) -> float:
        """When the build's root process started; report times are relative to it."""
        return self.processes[0].start if self.processes else 0.0

    def writers(self, path: str) -> tuple[Step, ...]:
        return self.writers_of.get(path, ())

    def step(self, key: StepKey) -> Step | None:
        return self.by_key.get(key)


def load_trace(trace_path: str | os.PathLike, workspace: str, parent: bool = False) -> BuildTrace:
    """`parent`: the workspace's parent is buildfuzz's, its files named `../NAME` as manifests name them."""
    with _collector_paused():
        return build_trace(track_calls(joined_calls(trace_path), workspace, parent), workspace)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Loading a trace makes millions of objects and no reference cycles: the cyclic
    collector would only walk the growing heap again and again. At the end they are moved
    out of its sight (`gc.freeze`), as a final full collection would file them as old, but
    without walking them (4.8 s of a 100,000-step trace's analysis); left young, they would
    be walked by each generation's collection in turn as the analysis goes on. Reference
    counting still frees them with the trace. The collection first clears what garbage was
    already there, which would otherwise be frozen with them."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def build_trace(processes: list[Process], workspace: str) -> BuildTrace:
    members, outer = _assign_steps(processes)
    roots = sorted(members, key=lambda i: (processes[i].start, i))
    step_id = {root: sid for sid, root in enumerate(roots)}
    steps: list[Step] = []
    seen: dict[tuple[str, str], int] = {}
    for root in roots:
        proc = processes[root]
        argv = proc.execs[0] if proc.execs else proc.argv
        command = command_of(argv)
        same = identity(command, proc.cwd)
        occurrence = seen.get(same, 0)
        seen[same] = occurrence + 1
        enclosing = outer[root]
        procs = [processes[i] for i in members[root]]
        steps.append(_step(len(steps), argv, command, procs, (*same, occurrence), step_id.get(enclosing)))
    writers: dict[str, list[Step]] = {}
    for step in steps:
        for path in step.writes:
            writers.setdefault(path, []).append(step)
    return BuildTrace(
        workspace=os.path.normpath(os.path.abspath(workspace)),
        processes=tuple(processes),
        steps=tuple(steps),
        by_key={s.key: s for s in steps},
        writers_of={p: tuple(w) for p, w in writers.items()},
    )


def match_steps(a: BuildTrace, b: BuildTrace) -> list[tuple[Step, Step]]:
    """Pairs of the same step in two runs, in `a`'s start order."""
    return [(s, b.by_key[s.key]) for s in a.steps if s.key in b.by_key]


def is_driver(proc: Process) -> bool:
    if not proc.execs:  # a fork that never exec'd is still its parent's helper
        return False
    if any(os.path.basename(argv[0]) in DRIVERS for argv in proc.execs[:-1] if argv):
        return True  # run by a driver's name, through a wrapper that execs the program (a shim)
    argv = proc.execs[-1]
    name = os.path.basename(argv[0]) if argv else ""
    return name in DRIVERS or (name == "cmake" and "--build" in argv) \
        or (name == "meson" and next((a for a in argv[1:] if not a.startswith("-")), "") in MESON_DRIVING)


def command_of(argv: Iterable[str]) -> str:
    """`sh -c LINE` → LINE (the recipe as written); anything else → its shell-quoted argv."""
    argv = tuple(argv)
    line = shell_line(argv)
    return line if line is not None else shlex.join(argv)


def shell_line(argv: tuple[str, ...]) -> str | None:
    """LINE if argv is `sh [options] -c LINE ...` (any common shell), else None."""
    if not argv or os.path.basename(argv[0]) not in SHELLS:
        return None
    args, i, takes_line = argv[1:], 0, False
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--"):
        takes_line |= args[i][0] == "-" and not args[i].startswith("--") and "c" in args[i]
        i += 2 if args[i] in ("-o", "+o") else 1
    return args[i] if takes_line and i < len(args) else None


def _assign_steps(processes: list[Process]) -> tuple[dict[int, list[int]], dict[int, int | None]]:
    """Step root → its member processes; and step root → the step root enclosing its driver.

    Parents precede children in `processes`, so one forward pass sees each parent first.
    """
    owner: dict[int, int] = {}  # non-driver process → its step root
    enclosing: dict[int, int | None] = {}  # driver → step root it runs inside (None: top level)
    members: dict[int, list[int]] = {}
    outer: dict[int, int | None] = {}
    for proc in processes:
        i, parent = proc.index, proc.parent
        if i == 0 or is_driver(proc):
            enclosing[i] = owner.get(parent, enclosing.get(parent)) if parent is not None else None
        elif parent is None or parent in enclosing:  # launched by a driver (or parent unknown)
            owner[i] = i
            members[i] = [i]
            outer[i] = enclosing.get(parent) if parent is not None else None
        else:
            owner[i] = owner[parent]
            members[owner[i]].append(i)
    return members, outer


def _step(
    sid: int, argv: tuple[str, ...], command: str, procs: list[Process], key: StepKey, outer: int | None
) -> Step:
    seen = _Collected()
    for proc in procs:
        seen.add(proc)
    reads, probes, first_writes = seen.reads, seen.probes, seen.first_writes
    first_look = {**{path: probe.time for path, probe in probes.items()}, **reads}
    for path in probes.keys() & reads.keys():
        first_look[path] = min(probes[path].time, reads[path])
    # written before first looked at: made here. `<`: an O_RDWR open records its read and
    # write at one instant, and the old content counts
    made = {path for path in first_writes.keys() & first_look.keys() if first_writes[path] < first_look[path]}
    inputs = frozenset(first_look.keys() - made)
    root = procs[0]
    return Step(
        id=sid,
        argv=argv,
        command=command,
        cwd=root.cwd,
        start=root.start,
        end=max(p.end for p in procs),
        exit_code=root.exit_code,
        signal=root.signal,
        pids=tuple(p.pid for p in procs),
        reads=seen.reads,
        probes=seen.probes,
        writes=seen.writes,
        deletes=seen.deletes,
        mkdirs=seen.mkdirs,
        lists=seen.lists,
        read_order=tuple(sorted(seen.reads, key=seen.reads.__getitem__)),
        inputs=inputs,
        leaf=seen.leaves(procs),
        key=key,
        outer=outer,
        env=root.env,
        members=tuple(p.index for p in procs),
    )


@dataclass(slots=True)
class _Collected:
    """A step's accesses merged over its processes."""

    reads: dict[str, float] = field(default_factory=dict)
    probes: dict[str, Access] = field(default_factory=dict)
    writes: dict[str, float] = field(default_factory=dict)
    first_writes: dict[str, float] = field(default_factory=dict)
    deletes: dict[str, float] = field(default_factory=dict)
    mkdirs: dict[str, float] = field(default_factory=dict)
    lists: dict[str, float] = field(default_factory=dict)
    last_writer: dict[str, tuple[Process, float]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    printed_into: dict[str, Process] = field(default_factory=dict)  # file → program whose stdout it was

    def add(self, proc: Process) -> None:
        for a in proc.accesses:
            path = a.path
            if a.kind == "read":
                self.reads[path] = min(a.time, self.reads.get(path, a.time))
            elif a.kind == "probe":
                old = self.probes.get(path)
                if old is None or a.time < old.time:
                    self.probes[path] = a  # the access itself, not a copy: a build has millions
            elif a.kind == "write":
                self.first_writes[path] = min(a.time, self.first_writes.get(path, a.time))
                if a.last >= self.writes.get(path, a.last):
                    self.writes[path] = a.last
                    self.last_writer[path] = (proc, a.last)
                    if a.origin is not None:
                        self.origins[path] = a.origin
            elif a.kind == "delete":
                self.deletes[path] = max(a.last, self.deletes.get(path, a.last))
            elif a.kind == "mkdir":
                self.mkdirs[path] = min(a.time, self.mkdirs.get(path, a.time))
            elif a.kind == "list":
                self.lists[path] = min(a.time, self.lists.get(path, a.time))
            elif a.kind == "stdout" and shell_line(proc.argv) is None:
                self.printed_into.setdefault(path, proc)

    def leaves(self, procs: list[Process]) -> dict[str, tuple[str, ...]]:
        """Written file → argv of the program that produced its content."""
        leaf = {}
        for path, (writer, opened) in self.last_writer.items():
            if shell_line(writer.argv) is not None:  # `sh -c 'gen.py > x'`: the shell only opened x
                writer = self.printed_into.get(path) or _next_child(writer, opened, procs)
            leaf[path] = writer.argv
        for target, origin in self.origins.items():  # `gen > x.tmp && mv x.tmp x`: gen made x
            leaf[target] = leaf.get(origin, leaf[target])
        return leaf


def _next_child(writer: Process, opened: float, procs: list[Process]) -> Process:
    """A shell hands a redirect it opened to the next command it starts (before it opens
    another output). No such child: the shell wrote it itself (`echo ... > x`)."""
    next_open = min((a.time for a in writer.accesses if a.kind == "write" and a.time > opened), default=float("inf"))
    children = [p for p in procs if p.parent == writer.index and opened <= p.start < next_open]
    return min(children, key=lambda p: p.start, default=writer)


def written_by_drivers(trace: BuildTrace, paths: Iterable[str]) -> dict[str, str]:
    """Of `paths`, those no step wrote and a driver wrote itself (ninja's `.ninja_log`):
    path → the driver's program name. A driver's own accesses belong to no step."""
    wanted = {path for path in paths if not trace.writers(path)}
    found: dict[str, str] = {}
    for proc in trace.processes if wanted else ():
        if proc.index == 0 or is_driver(proc):
            for access in proc.accesses:
                if access.kind == "write" and access.path in wanted:
                    found.setdefault(access.path, os.path.basename(proc.argv[0]) if proc.argv else "the build")
    return found
