"""Hand-written BuildTraces for tests: say what each step did, get what a trace would give.

Every step becomes one `sh -c COMMAND` process launched by a root `make`, so the
result goes through the same step building as a real trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fuzzer.trace.processes import Access, Process
from fuzzer.trace.steps import BuildTrace, build_trace


@dataclass(frozen=True, slots=True)
class FakeStep:
    command: str
    start: float
    end: float
    reads: dict[str, float] = field(default_factory=dict)  # file → read time
    probes: dict[str, tuple[float, bool]] = field(default_factory=dict)  # file → (time, found)
    writes: dict[str, float] = field(default_factory=dict)  # file → write time
    deletes: dict[str, float] = field(default_factory=dict)
    lists: dict[str, float] = field(default_factory=dict)  # directory → listing time
    mkdirs: dict[str, float] = field(default_factory=dict)  # directory → creation time
    exit_code: int = 0
    cwd: str = "."


def synthetic_trace(steps: list[FakeStep], workspace: str = "/ws") -> BuildTrace:
    ordered = sorted(steps, key=lambda s: s.start)
    first = min((s.start for s in ordered), default=0.0)
    last = max((s.end for s in ordered), default=0.0)
    make = ("make",)
    processes = [Process(0, 1, None, make, (make,), ".", first - 1.0, last + 1.0, 0, None, ())]
    for i, step in enumerate(ordered, start=1):
        argv = ("/bin/sh", "-c", step.command)
        processes.append(
            Process(
                index=i,
                pid=100 + i,
                parent=0,
                argv=argv,
                execs=(argv,),
                cwd=step.cwd,
                start=step.start,
                end=step.end,
                exit_code=step.exit_code,
                signal=None,
                accesses=_accesses(step),
                ppid=1,
            )
        )
    return build_trace(processes, workspace)


def _accesses(step: FakeStep) -> tuple[Access, ...]:
    accesses = [Access("read", p, t, t) for p, t in step.reads.items()]
    accesses += [Access("probe", p, t, t, found) for p, (t, found) in step.probes.items()]
    accesses += [Access("write", p, t, t) for p, t in step.writes.items()]
    accesses += [Access("delete", p, t, t) for p, t in step.deletes.items()]
    accesses += [Access("list", p, t, t) for p, t in step.lists.items()]
    accesses += [Access("mkdir", p, t, t) for p, t in step.mkdirs.items()]
    return tuple(accesses)
