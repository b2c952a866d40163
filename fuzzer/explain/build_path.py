"""Kind `build-path`: a process below a wrapper recorded the random directory it ran in.

A frontend that builds a C extension from its sdist (pip, `python -m build`) unpacks it in
a fresh `/tmp/build-via-sdist-*` directory; every `gcc -g` compile run there records that
directory in the debug info (`DW_AT_comp_dir`), and the wrapper (the backend hook,
setuptools) only copies the library out. Replayed whole, the wrapper makes a new directory
each time and varies, with no stabiliser; its replay says nothing about why.

A stabiliser its replays found does not settle it: the replays all run in the traced
build's directory, so what they show stable (a wheel's zip timestamps, stable with
SOURCE_DATE_EPOCH) says nothing of a directory that differs between builds (the `.so` in
it). So when a culprit is intrinsic or has no kind, the processes below its
step that made the output's bytes (`fuzzer.trace.producers`) are looked at in both traced
builds, upstream first. The culprit becomes `build-path`, its `writer_process` that process,
only when the evidence is all there: the process ran in one directory in the reference and
in another in the divergent build, and the bytes it wrote in each build (as the build kept
them; else the output's) contain that build's own directory name.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Callable

from msgspec import structs

from fuzzer.execute.moved import DIR, MovedCall, run_moved
from fuzzer.model import Culprit, Kind, WriterProcess
from fuzzer.stats import percent_above, upper_bound_zero
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.process_model import Process
from fuzzer.trace.producers import Producer, producers
from fuzzer.trace.restore import Kept
from fuzzer.trace.steps import BuildTrace, Step, command_of
from fuzzer.trace.tempnames import normalised
from fuzzer.trace.writers import byte_sources, subtree

Bytes = Callable[[str], bytes | None]  # a traced build's bytes of a path as its trace names it; None: not at hand
NO_BYTES: Bytes = lambda path: None
# Python build frontends, as programs and as `python -m` modules: the random directory a
# backend hook's compiles run in is theirs
FRONTEND_PROGRAMS = {"pip": "pip", "pip3": "pip"}
FRONTEND_MODULES = {"pip": "pip", "build": "python -m build"}
# the compiler drivers that take -ffile-prefix-map (gcc, cc, clang, g++, x86_64-linux-gnu-gcc-12, ...)
COMPILER = re.compile(r"(?:^|-)(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(?:-[\d.]+)?$")
BEFORE, AFTER = 3, 12  # runs without the flag, then with it: as `buildfuzz fix` proves a patch
PROOF_S = 60.0  # the runs are tried only when they would take less, by the traced run's time


def below_wrapper(culprit: Culprit, candidate: RootCandidate, traces: tuple[BuildTrace, BuildTrace],
                  contents: tuple[Bytes, Bytes]) -> Culprit:
    """`culprit` as kind build-path, named by the process below its step that recorded the
    directory it ran in, when both traced builds (`traces`: the reference's, the divergent's;
    `contents`: their bytes) show it; else `culprit` unchanged."""
    ref, div = candidate.ref, candidate.div
    if culprit.kind not in (Kind.INTRINSIC, Kind.UNKNOWN) or ref is None or div is None:
        return culprit
    paths = tuple(dict.fromkeys((*candidate.outputs, *candidate.explains)))  # pip copies the hook's wheel out
    sides = [_units(trace, step, paths) for trace, step in zip(traces, (ref, div))]
    chain = list(sides[0].items())
    for at in reversed(range(len(chain))):  # upstream first: the process that made the bytes
        key, ours = chain[at]
        theirs = sides[1].get(key)
        if theirs is not None and (held := recorded_directory(ours, theirs, contents, paths)) is not None:
            return _build_path(culprit, ref, traces[0], paths, [u for _, u in chain[:at + 1]], theirs,
                               held, contents[0])
    return culprit


def traced_bytes(kept: Kept, fetch: Callable[[str, Path], bool]) -> Bytes:
    """A traced build's bytes of a file: the last version it kept of a file it removed
    (`fuzzer.execute.keep`), else its tree's (`fetch(path, dest)`, False when it is gone)."""
    def read(path: str) -> bytes | None:
        versions = kept.get(path)
        if versions:
            return Path(versions[-1][1]).read_bytes()
        with tempfile.TemporaryDirectory(prefix="buildfuzz-bytes-") as scratch:
            copy = Path(scratch) / "file"
            return copy.read_bytes() if fetch(path, copy) else None

    return read


def recorded_directory(ours: Producer, theirs: Producer, contents: tuple[Bytes, Bytes],
                       outputs: tuple[str, ...]) -> tuple[str, str] | None:
    """Which bytes show that the two runs of one process recorded where they ran: they ran
    in different absolute directories, and each build's bytes (the process's own file, else
    the output's) hold its own directory: the file that held it in each build; None when
    either is not shown."""
    dirs = (ours.process.cwd, theirs.process.cwd)
    if dirs[0] == dirs[1] or not all(os.path.isabs(d) and d != "/" for d in dirs):
        return None
    held = [_holding(read, unit.wrote, outputs, directory)
            for read, unit, directory in zip(contents, (ours, theirs), dirs)]
    return (held[0], held[1]) if all(held) else None


def _holding(read: Bytes, wrote: str, outputs: tuple[str, ...], directory: str) -> str:
    """The first of the process's file and the outputs at hand, the one that holds `directory`
    ("" when the first at hand does not)."""
    path, data = next(((p, b) for p in (wrote, *outputs) if (b := read(p)) is not None), ("", None))
    return path if data is not None and directory.encode() in data else ""


def random_part(a: str, b: str) -> str:
    """`a` with its random part as X's: from the last separator (`-`, `.`, `/`) before the
    first character where `a` and `b` differ to the end of that path component (mkdtemp's
    names are letters, digits and `_`): `/tmp/build-via-sdist-XXXXXXXX`."""
    if a == b:
        return a
    same = max(a.rfind(sep, 0, len(os.path.commonprefix([a, b]))) for sep in "-./") + 1
    end = a.find("/", same)
    end = len(a) if end < 0 else end
    return a[:same] + "X" * (end - same) + a[end:]


def remedy(writer: WriterProcess) -> str:
    """What makes the output the same wherever the directory is: the compile maps it away,
    and who can pass the flag; a frontend's directory is not the project's to name."""
    flag = f"-ffile-prefix-map={writer.recorded_dir}=."
    text = (f"compile with {flag}, with the directory's actual name in place of the X's (it is made anew every "
            f"build, by `{writer.dir_made_by or 'the wrapper'}`: the flag must be added where it is known, e.g. "
            "CFLAGS set by the process that makes it)")
    if writer.frontend:
        text += (f"; the random directory is the frontend's ({writer.frontend} unpacks the sdist there): build the "
                 "wheel from the unpacked source tree at a fixed path instead (`python -m build --wheel` or "
                 "`pip wheel --no-build-isolation .` run in the tree), and map that path away")
    return text


def _units(trace: BuildTrace, step: Step, paths: tuple[str, ...]) -> dict[tuple[str, str, int], Producer]:
    """The step's producers by what stays the same across runs: command and directory with
    temporary names blanked, and which of those it is."""
    found: dict[tuple[str, str, int], Producer] = {}
    seen: Counter[tuple[str, str]] = Counter()
    for unit in producers(trace, step, byte_sources(trace, step, paths)):
        name = (normalised(_command(unit.process)), normalised(unit.process.cwd))
        seen[name] += 1
        found[(*name, seen[name])] = unit
    return found


def _build_path(culprit: Culprit, step: Step, trace: BuildTrace, paths: tuple[str, ...], chain: list[Producer],
                theirs: Producer, held: tuple[str, str], read: Bytes) -> Culprit:
    """`paths`: the differing files; `chain`: the producers from theirs back to `chain[-1]`, the one that recorded
    its directory; `theirs`: that one in the divergent build; `held`: the files that held
    each build's directory; `read`: the reference's bytes."""
    unit, proc = chain[-1], chain[-1].process
    command = _command(proc)
    maker = _maker(trace, proc.cwd)
    writer = WriterProcess(
        command=command, argv=list(_argv(proc)), cwd=proc.cwd,
        identity=normalised(f"{command} (in {proc.cwd}), inside step {step.command} (in {step.cwd})"),
        wrote=[unit.wrote], replayed=False, recorded_dir=random_part(proc.cwd, theirs.process.cwd),
        dir_made_by=_command(maker) if maker is not None else "",
        frontend=_frontend(trace, maker) if maker is not None else "")
    writer = structs.replace(writer, remedy_status=_proven(trace, proc, unit.wrote, read))
    besides = (f"; its replays, all in the traced build's directory, were stable with {' + '.join(culprit.stabilized_by)}, "
               "which leaves this difference between builds" if culprit.stabilized_by else "")
    through = " ← ".join([", ".join(paths[:2]), *(f"{p.wrote} (`{_command(p.process)}`)" for p in chain)])
    evidence = (f"build path: `{command}` ran in {proc.cwd} in the traced reference and in {theirs.process.cwd} in "
                f"the traced divergent build; {held[0]} holds the first in the reference, {held[1]} the second in the "
                f"divergent build: it records the directory it ran in, which differs every build; the bytes go "
                f"{through}{besides}")
    proof = f" ({writer.remedy_status})" if writer.remedy_status else ""
    # first: the report's cause block shows one line of evidence, and this is the claim
    return structs.replace(culprit, kind=Kind.BUILD_PATH, writer_process=writer, writer=writer.argv,
                           evidence=f"{evidence}\n{culprit.evidence}\nremedy: {remedy(writer)}{proof}")


def _proven(trace: BuildTrace, proc: Process, wrote: str, read: Bytes) -> str:
    """The remedy run: the compile again in fresh directories, BEFORE times as traced (its
    output must follow the directory), then AFTER times with -ffile-prefix-map of each
    directory added (its output must not); "" when it is no compiler driver."""
    argv = _argv(proc)
    if not COMPILER.search(os.path.basename(argv[0])):
        return ""
    below = [trace.processes[i] for i in subtree(trace, proc.index)]
    inside = proc.cwd.rstrip("/") + "/"
    inputs = {a.path for p in below for a in p.accesses if a.kind == "read" and a.path.startswith(inside)}
    made = {a.path for p in below for a in p.accesses if a.kind == "write"}
    data = {path: read(path) for path in sorted(inputs - made)}
    seconds = max(p.end for p in below) - proc.start
    if proc.env is None or None in data.values() or not wrote.startswith(inside):
        return "not proven: its environment or the bytes of the files it read are not at hand"
    if (BEFORE + AFTER) * seconds > PROOF_S:
        return f"not proven: {BEFORE + AFTER} runs of it would take about {(BEFORE + AFTER) * seconds:.0f} s"
    call = MovedCall(argv, proc.cwd, dict(e.partition("=")[::2] for e in proc.env),
                     tuple((p[len(inside):], b) for p, b in data.items() if b is not None), wrote[len(inside):],
                     timeout=max(10.0, 10 * seconds))
    before = run_moved(call, (), BEFORE)
    after = run_moved(call, (f"-ffile-prefix-map={DIR}=.",), AFTER)
    shown = len(set(before) - {None})
    if None in before or shown < 2:
        return f"not proven: run again in {BEFORE} fresh directories as traced it gave {shown} distinct output(s)"
    if None in after or len(set(after)) > 1:
        return f"not proven: with the flag, {AFTER} runs in fresh directories gave {len(set(after))} distinct outputs"
    return (f"proven: before {shown} distinct in {BEFORE} fresh directories; after, with -ffile-prefix-map of each, "
            f"1 in {AFTER}: a difference below {percent_above(upper_bound_zero(AFTER))} a run at 95%")


def _maker(trace: BuildTrace, directory: str) -> Process | None:
    """The process that created `directory` first."""
    made = [(a.time, p.index) for p in trace.processes for a in p.accesses if a.kind == "mkdir" and a.path == directory]
    return trace.processes[min(made)[1]] if made else None


def _frontend(trace: BuildTrace, proc: Process) -> str:
    """The Python build frontend `proc` is, or runs under ("" for none)."""
    while True:
        argv = _argv(proc)
        modules = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "-m"]
        known = FRONTEND_PROGRAMS.get(os.path.basename(argv[0])) or next(
            (FRONTEND_MODULES[m] for m in modules if m in FRONTEND_MODULES), "")
        if known or proc.parent is None:
            return known
        proc = trace.processes[proc.parent]


def _argv(proc: Process) -> tuple[str, ...]:
    return (proc.execs[0] if proc.execs else proc.argv) or ("",)


def _command(proc: Process) -> str:
    return command_of(_argv(proc))
