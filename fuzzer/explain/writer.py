"""What a root divergent step is replayed as: the step, or the smallest process in it that
wrote the differing bytes, and how the culprit names that process.

A root step can be a whole script (`./configure`, `debian/rules binary`, `pip wheel`, a
`build.sh` line), whose every replay costs most of a build. The bytes that differ were
written by one process inside it (`fuzzer.trace.writers`: autom4te under autoreconf, the
wheel builder under pip). When that process can be replayed alone, it is: its first exec's
argv, its cwd and its environment as traced, every file its subtree wrote or deleted put
back first, and only the files it produced compared. The culprit keeps naming the step
(`command`, `argv`) and gains `writer_process`; the evidence says which was replayed.
"""

from __future__ import annotations

from dataclasses import dataclass

from msgspec import structs

from fuzzer.execute.local import build_env
from fuzzer.execute.step_replay import StepCall
from fuzzer.model import Culprit, WriterProcess
from fuzzer.trace.graph import RootCandidate
from fuzzer.trace.steps import BuildTrace
from fuzzer.trace.writers import Writer, writer_of


@dataclass(frozen=True)
class ReplayTarget:
    call: StepCall
    duration: float  # what one replay costs: the traced run time of what is replayed
    writer: Writer | None  # None: the trace names no process inside the step

    @property
    def replays_process(self) -> bool:
        return self.writer is not None and not self.writer.is_step


class ReplayTargets:
    """One target per root candidate, in the trace of the tree replays run on."""

    def __init__(self, reference: BuildTrace, divergent: BuildTrace, jobs: int):
        self.reference, self.divergent, self.jobs = reference, divergent, jobs
        self._targets: dict[int, ReplayTarget] = {}

    def of(self, candidate: RootCandidate) -> ReplayTarget:
        key = id(candidate)
        if key not in self._targets:
            self._targets[key] = self._target(candidate)
        return self._targets[key]

    def _target(self, candidate: RootCandidate) -> ReplayTarget:
        step = candidate.ref or candidate.div
        trace = self.reference if candidate.ref is not None else self.divergent
        paths = tuple(dict.fromkeys((*candidate.outputs, *candidate.explains)))
        writer = writer_of(trace, step, paths) if step.members else None  # type: ignore[union-attr]
        if writer is None or writer.is_step:
            return ReplayTarget(self._step_call(candidate), candidate.duration, writer)
        return ReplayTarget(self._process_call(writer), writer.duration, writer)

    def _step_call(self, candidate: RootCandidate) -> StepCall:
        step = candidate.ref or candidate.div
        # outside the tree too (a wheel under /tmp): what replays write there is removed again
        touched = {p for s in (candidate.ref, candidate.div) if s is not None for p in (*s.writes, *s.deletes)}
        return StepCall(
            argv=step.argv,  # type: ignore[union-attr]
            cwd=step.cwd,  # type: ignore[union-attr]
            env=environment(step.env, self.jobs),  # type: ignore[union-attr]
            exit_code=step.exit_code,  # type: ignore[union-attr]
            restored=tuple(sorted(touched)),
            compared=tuple(candidate.outputs) or tuple(sorted(step.outputs)),  # type: ignore[union-attr]
            looked_at=tuple(sorted({*step.reads,  # type: ignore[union-attr]
                                    *(p for p, probe in step.probes.items() if probe.found)})),  # type: ignore[union-attr]
            listed=tuple(sorted(step.lists)),  # type: ignore[union-attr]
        )

    def _process_call(self, writer: Writer) -> StepCall:
        proc = writer.process
        touched = {a.path for p in writer.members for a in p.accesses if a.kind in ("write", "delete")}
        return StepCall(
            argv=proc.execs[0],
            cwd=proc.cwd,
            env=environment(proc.env or writer.step.env, self.jobs),
            exit_code=proc.exit_code,
            restored=tuple(sorted(touched)),
            compared=writer.wrote,
            what="process",
            looked_at=tuple(sorted({a.path for p in writer.members for a in p.accesses
                                    if a.kind in ("read", "probe") and a.found})),
            listed=tuple(sorted({a.path for p in writer.members for a in p.accesses if a.kind == "list"})),
        )

    def annotate(self, culprit: Culprit, candidate: RootCandidate) -> Culprit:
        """The culprit with the process that wrote its bytes, and what was replayed."""
        target = self.of(candidate)
        writer = target.writer
        if writer is None or (writer.is_step and not writer.passed_over):
            return culprit
        described = WriterProcess(
            command=writer.command, argv=list(writer.process.execs[0] if writer.process.execs else writer.process.argv),
            cwd=writer.process.cwd, identity=writer.identity, wrote=list(writer.wrote),
            replayed=target.replays_process, not_replayable=writer.not_replayable(),
        )
        line = _writer_line(writer, target, candidate)
        return structs.replace(culprit, writer_process=described, writer=culprit.writer or described.argv,
                       evidence=f"{culprit.evidence}\n{line}")


def _writer_line(writer: Writer, target: ReplayTarget, candidate: RootCandidate) -> str:
    wrote = ", ".join(writer.wrote[:2]) or "its outputs"
    if target.replays_process:
        return (f"writer: `{writer.command}` (in {writer.process.cwd}) wrote {wrote}; replays ran that process "
                f"alone (about {target.duration:.2f} s each), not the whole step (about {candidate.duration:.2f} s)")
    return f"writer: the step was replayed whole: {writer.not_replayable()}"


def environment(traced: tuple[str, ...] | None, jobs: int) -> dict[str, str]:
    """The environment as traced; a build's environment when the trace has none."""
    if traced is None:
        return build_env(jobs)
    return dict(item.partition("=")[::2] for item in traced)
