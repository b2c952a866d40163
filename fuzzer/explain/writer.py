"""What a root divergent step is replayed as: the step, or the smallest process in it that
wrote the differing bytes, and how the culprit names that process.

A root step can be a whole script (`./configure`, `debian/rules binary`, `pip wheel`, a
`build.sh` line), whose every replay costs most of a build. The bytes that differ were
written by one process inside it (`fuzzer.trace.writers`: autom4te under autoreconf, the
wheel builder under pip). When that process can be replayed alone, it is: its first exec's
argv, its cwd and its environment as traced, every file its subtree wrote or deleted put
back first, and only the files it produced compared. The culprit keeps naming the step
(`command`, `argv`) and gains `writer_process`; the evidence says which was replayed.

An archive's bytes are its members': a differing member of a package (`usr/lib/libfoo.so`
in a `.deb`'s `data.tar.xz`) leads to the file the traced build wrote with the same content digest
(`debian/tmp/usr/lib/libfoo.so`, or the build-tree file it was installed from), and the
culprit is that file's writer, not the `dpkg-deb` that packed it (`Provenance`).
"""

from __future__ import annotations

import posixpath
import shlex
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from msgspec import structs

from fuzzer.compare.listing import file_members
from fuzzer.explain.build_path import NO_BYTES, Bytes, below_wrapper
from fuzzer.execute import keep
from fuzzer.execute.local import build_env
from fuzzer.execute.step_replay import StepCall
from fuzzer.model import Culprit, WriterProcess
from fuzzer.observe import EMPTY_DIGESTS, Manifest, is_package
from fuzzer.trace.absent import Absence
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.steps import BuildTrace, Step
from fuzzer.trace.paths import PathNames
from fuzzer.trace.restore import NOTHING_KEPT, Kept, handed_down, kept_of
from fuzzer.trace.writers import Mtimes, Writer, content_source, copies, created_after_missed, restored_inputs, writer_of

MEMBERS_SHOWN = 3


@dataclass(frozen=True)
class Provenance:
    """What the reference trace's bytes were made from, beyond its renames and copies."""

    made_from: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)  # archive → ((member, file), ...)
    copied: dict[str, tuple[str, int]] = field(default_factory=dict)  # trace.writers.copies

    def sources(self, archive: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(source for _, source in self.made_from.get(archive, ())))

    def line(self, archive: str) -> str:
        pairs = self.made_from.get(archive, ())
        shown = "; ".join(f"member {member} has the bytes of {source}" for member, source in pairs[:MEMBERS_SHOWN])
        more = f"; and {len(pairs) - MEMBERS_SHOWN} more" if len(pairs) > MEMBERS_SHOWN else ""
        return f"{archive}: {shown}{more} (same content in the traced build)" if pairs else ""


def provenance(trace: BuildTrace, reference: Manifest, divergent: Manifest, outputs: list[str],
               fetch: Callable[[str, Path], bool]) -> Provenance:
    """`reference`, `divergent`: the traced pair's manifests; `outputs`: the roots' outputs,
    whose archives (packages and static libraries) are looked inside; `fetch(path, dest)`
    copies the traced reference's file, before any replay rewrites the tree."""
    digests = {path: e.digest for path, e in reference.entries.items() if e.kind == "file"}
    by_digest: dict[str, list[str]] = defaultdict(list)
    for path, digest in digests.items():
        if digest not in EMPTY_DIGESTS and not _archive(path):
            by_digest[digest].append(path)
    made_from = {}
    with tempfile.TemporaryDirectory(prefix="buildfuzz-members-") as scratch:
        for archive in dict.fromkeys(p for p in outputs if _archive(p) and p in digests):
            copy = Path(scratch) / "archive"
            copy.unlink(missing_ok=True)
            if fetch(archive, copy):
                pairs = _differing_members(trace, file_members(str(copy)), by_digest, reference, divergent)
                if pairs:
                    made_from[archive] = pairs
    return Provenance(made_from, copies(trace, digests))


def mtimes_of(manifest: Manifest | None) -> Mtimes:
    """A traced build's files' mtimes when it ended, which tell an open for writing that
    wrote nothing from a rewrite (`fuzzer.trace.writers`)."""
    return {path: e.mtime_ns for path, e in manifest.entries.items()} if manifest else {}


def kept_files(trace_path: str | None, trace: BuildTrace, tree: str, parent: bool) -> Kept:
    """What a traced build kept of the files it removed (`fuzzer.execute.keep`), named as its
    trace names them: only the versions a process read before another removed them, and
    the files some process read that were removed (a compile's object in a random directory,
    whose bytes say what it recorded: `fuzzer.explain.build_path`), the others deleted now."""
    if not trace_path or not (entries := keep.entries(trace_path)):
        return NOTHING_KEPT
    into = keep.kept_dir(trace_path)
    kept = kept_of(entries, PathNames(tree, parent).relative, lambda digest: str(into / digest))
    read = {where for proc in trace.processes for where in restored_inputs(trace, [proc.index], kept).values()}
    read |= {where for proc in trace.processes for a in proc.accesses if a.kind == "read"
             for _, where, _ in kept.get(a.path, ())}
    keep.select(trace_path, {Path(where).name for where in read})
    return {path: left for path, versions in kept.items() if (left := tuple(v for v in versions if v[1] in read))}


def _archive(path: str) -> bool:
    return is_package(path) or path.endswith(".a")


def _differing_members(trace: BuildTrace, members: dict[str, str], by_digest: dict[str, list[str]],
                       reference: Manifest, divergent: Manifest) -> tuple[tuple[str, str], ...]:
    """(member, the file it was made from) for the members whose file differs in the
    divergent traced build: the file the build wrote with the member's bytes, the one whose
    path ends most like the member's name when several have them."""
    found = []
    for member, digest in members.items():
        files = [p for p in by_digest.get(digest, ()) if content_source(trace, p) is not None
                 and (divergent.entries.get(p) is None or divergent.entries[p].identity() != reference.entries[p].identity())]
        if files:
            found.append((member, max(files, key=lambda p: (_common_suffix(p, member), p))))
    return tuple(found)


def _common_suffix(path: str, member: str) -> int:
    """How many trailing path components the two names share."""
    a, b = path.split("/")[::-1], posixpath.normpath(member).split("/")[::-1]
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


@dataclass(frozen=True)
class ReplayTarget:
    call: StepCall
    duration: float  # what one replay costs: the traced run time of what is replayed
    writer: Writer | None  # None: the trace names no process inside the step
    then: tuple[str, ...] = ()  # the commands replays run after the step: those that rewrote its output

    @property
    def replays_process(self) -> bool:
        return self.writer is not None and not self.writer.is_step


class ReplayTargets:
    """One target per root candidate, in the trace of the tree replays run on."""

    def __init__(self, reference: BuildTrace, divergent: BuildTrace, jobs: int, made: Provenance = Provenance(),
                 mtimes: Mtimes = {}, kept: Kept = NOTHING_KEPT, contents: tuple[Bytes, Bytes] = (NO_BYTES, NO_BYTES)):
        """`made`: what the reference trace's archives and plain copies were made from;
        `mtimes`: its files' when it ended (`fuzzer.trace.writers.Mtimes`); `kept`: the bytes
        of the files it removed, as the traced build kept them (`fuzzer.execute.keep`);
        `contents`: each traced build's bytes of a file (`fuzzer.explain.build_path`)."""
        self.reference, self.divergent, self.jobs, self.made = reference, divergent, jobs, made
        self.mtimes, self.kept, self.contents = mtimes, kept, contents
        self._targets: dict[int, ReplayTarget] = {}
        self._absence = {id(t): Absence(t) for t in (reference, divergent)}

    def of(self, candidate: RootCandidate) -> ReplayTarget:
        key = id(candidate)
        if key not in self._targets:
            self._targets[key] = self._target(candidate)
        return self._targets[key]

    def _target(self, candidate: RootCandidate) -> ReplayTarget:
        step = candidate.replayed
        trace = self.reference if candidate.ref is not None else self.divergent
        paths = tuple(dict.fromkeys((*candidate.outputs, *candidate.explains)))
        made = self.made if trace is self.reference else Provenance()
        made_from = {p: made.sources(p) for p in paths if made.sources(p)}
        mtimes = self.mtimes if trace is self.reference else {}
        kept = self.kept if trace is self.reference else NOTHING_KEPT
        then = _rewriters(candidate, trace is self.reference)
        if then:  # its bytes are what the lines after it left: replayed together, as one step
            return ReplayTarget(self._step_call(candidate, trace, then), candidate.duration, None,
                                tuple(s.command for s in then))
        writer = writer_of(trace, step, paths, made_from, made.copied, mtimes, kept) if step.members else None
        if writer is None or writer.is_step:
            return ReplayTarget(self._step_call(candidate, trace), candidate.duration, writer)
        return ReplayTarget(self._process_call(writer, trace), writer.duration, writer)

    def _step_call(self, candidate: RootCandidate, trace: BuildTrace, then: tuple[Step, ...] = ()) -> StepCall:
        """The step, and `then` after it in one shell (the lines that rewrote its output)."""
        step = candidate.replayed
        steps = (step, *then)
        # outside the tree too (a wheel under /tmp): what replays write there is removed again
        touched = {p for s in (candidate.ref, candidate.div, *then) if s is not None for p in (*s.writes, *s.deletes)}
        members = [i for s in steps for i in s.members]
        hidden = created_after_missed(trace, members)
        writes = {p: t for s in steps for p, t in s.writes.items()}
        return StepCall(
            argv=in_sequence(steps) if then else step.argv,
            cwd=step.cwd,
            env=environment(step.env, self.jobs),
            exit_code=step.exit_code,
            restored=tuple(sorted(touched.union(hidden))),
            compared=tuple(candidate.outputs) or tuple(sorted(step.outputs)),
            looked_at=tuple(sorted({p for s in steps for p in s.reads}
                                   | {p for s in steps for p, probe in s.probes.items() if probe.found})),
            listed=tuple(sorted({p for s in steps for p in s.lists})),
            created=self._absence[id(trace)].created([trace.processes[i] for i in members],
                                                     step.start, writes) + hidden,
            brought_back=self._brought_back(trace, members),
            made_dirs=handed_down(trace.processes, members[0], members) if members else (),
        )

    def _process_call(self, writer: Writer, trace: BuildTrace) -> StepCall:
        proc = writer.process
        touched = {a.path for p in writer.members for a in p.accesses if a.kind in ("write", "delete")}
        hidden = created_after_missed(trace, [p.index for p in writer.members])
        return StepCall(
            argv=proc.execs[0],
            cwd=proc.cwd,
            env=environment(proc.env or writer.step.env, self.jobs),
            exit_code=proc.exit_code,
            restored=tuple(sorted(touched.union(hidden))),
            compared=writer.wrote,
            what="process",
            looked_at=tuple(sorted({a.path for p in writer.members for a in p.accesses
                                    if a.kind in ("read", "probe") and a.found})),
            listed=tuple(sorted({a.path for p in writer.members for a in p.accesses if a.kind == "list"})),
            created=self._absence[id(trace)].created(writer.members, proc.start,
                                                     {a.path for p in writer.members for a in p.accesses
                                                      if a.kind == "write"}) + hidden,
            brought_back=self._brought_back(trace, [p.index for p in writer.members]),
            made_dirs=handed_down(trace.processes, proc.index, [p.index for p in writer.members]),
        )

    def _brought_back(self, trace: BuildTrace, members: Iterable[int]) -> tuple[tuple[str, str], ...]:
        kept = self.kept if trace is self.reference else NOTHING_KEPT
        return tuple(sorted(restored_inputs(trace, members, kept).items()))

    def annotate(self, culprit: Culprit, candidate: RootCandidate) -> Culprit:
        """The culprit with the process that wrote its bytes, what was replayed, and the
        removed inputs its replays were given back."""
        target = self.of(candidate)
        writer = target.writer
        back = target.call.brought_back
        if back:
            culprit = structs.replace(culprit, evidence=f"{culprit.evidence}\n{_brought_back_line(back)}")
        if target.then:
            culprit = structs.replace(culprit, evidence=(
                f"{culprit.evidence}\nreplayed with {', '.join(f'`{c}`' for c in target.then)} after it: in both builds "
                "those steps rewrote its output after it, so its bytes are what they left"))
        if writer is None or (writer.is_step and not writer.passed_over):
            return below_wrapper(culprit, candidate, (self.reference, self.divergent), self.contents)
        described = WriterProcess(
            command=writer.command, argv=list(writer.process.execs[0] if writer.process.execs else writer.process.argv),
            cwd=writer.process.cwd, identity=writer.identity, wrote=list(writer.wrote),
            replayed=target.replays_process, not_replayable=writer.not_replayable(),
        )
        # an archive the writer did not write itself: its members' files led to the writer
        lines = [line for p in candidate.outputs if candidate.ref is not None and p not in writer.wrote
                 and (line := self.made.line(p))]
        lines.append(_writer_line(writer, target, candidate))
        culprit = structs.replace(culprit, writer_process=described, writer=culprit.writer or described.argv,
                                  evidence="\n".join([culprit.evidence, *lines]))
        return below_wrapper(culprit, candidate, (self.reference, self.divergent), self.contents)


def _rewriters(candidate: RootCandidate, in_reference: bool) -> tuple[Step, ...]:
    """The steps a replay runs after the candidate: those that rewrote its output after it in
    both builds, in its directory (lines of its recipe: `ranlib` after `ar`), when it succeeded
    and the tree is the reference's, whose steps they are."""
    step = candidate.ref
    if not in_reference or step is None or step.exit_code != 0:
        return ()
    return tuple(s for s in candidate.rewriters if s.cwd == step.cwd)


def in_sequence(steps: Iterable[Step]) -> tuple[str, ...]:
    """One shell running the steps' argvs one after another, stopping at the first that fails."""
    return ("/bin/sh", "-c", " && ".join(shlex.join(s.argv) for s in steps))


def _brought_back_line(back: tuple[tuple[str, str], ...]) -> str:
    shown = ", ".join(path for path, _ in back[:MEMBERS_SHOWN])
    more = f" and {len(back) - MEMBERS_SHOWN} more" if len(back) > MEMBERS_SHOWN else ""
    return (f"removed inputs: {shown}{more}, which a process outside the replayed one removed before the "
            "build ended, were put back before each replay as the traced build kept them, and removed after")


def _writer_line(writer: Writer, target: ReplayTarget, candidate: RootCandidate) -> str:
    wrote = ", ".join(writer.wrote[:2]) or "its outputs"
    if target.replays_process:
        return (f"writer: `{writer.command}` (in {writer.process.cwd}) wrote {wrote}; replays ran that process "
                f"alone (about {target.duration:.2f} s each), not the whole step (about {candidate.duration:.2f} s)")
    return f"writer: the step was replayed whole: {writer.not_replayable()}"


def environment(traced: tuple[str, ...] | None, jobs: int) -> dict[str, str]:
    """The environment as traced (the keep's library in it is inert once its build ended:
    `fuzzer.execute.keep`); a build's environment when the trace has none."""
    if traced is None:
        return build_env(jobs)
    return dict(item.partition("=")[::2] for item in traced)
