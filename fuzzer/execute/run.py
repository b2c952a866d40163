"""One build, as asked for and as it went: `RunRequest` in, `RunRecord` out.

Every executor (local, Dask, the fake one of the tests) speaks these two types, so the
campaign, the store and the reports never know where a build ran. The kind of a run
says why it was made; an explore run's index is its place in the schedule, the other
kinds number their own runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from fuzzer.execute.jitter import JitterEvent
from fuzzer.model import RunKind, RunStatus
from fuzzer.observe import Manifest
from fuzzer.plan import Perturbation


@dataclass(frozen=True)
class RunRequest:
    index: int
    perturbation: Perturbation
    kind: RunKind = RunKind.EXPLORE
    trace: bool = False
    env: tuple[tuple[str, str], ...] = ()  # extra environment for this run only
    timeout: float | None = None  # None: the executor's own (the user's --timeout, if any)
    reason: str = ""  # an explore run: why the plan has it (fuzzer.model.Reason)

    @property
    def stem(self) -> str:
        """The name of its log and trace files."""
        prefix = "run" if self.kind is RunKind.EXPLORE else self.kind.value
        return f"{prefix}-{self.index:04d}"


@dataclass(frozen=True)
class RunRecord:
    index: int
    perturbation: Perturbation
    status: RunStatus
    exit_code: int | None
    wall_s: float
    manifest: Manifest | None
    log_path: str  # on the campaign's machine, whatever host ran the build
    log_tail: str = ""
    jitter: tuple[JitterEvent, ...] = ()
    trace_path: str | None = None  # on the campaign's machine
    stragglers: int = 0
    kind: RunKind = RunKind.EXPLORE
    host: str = ""  # where it ran: "" for this machine, else the executor's name for the host
    started_at: float = 0.0  # wall-clock seconds (epoch), to tell which runs overlapped
    note: str = ""  # what the executor had to do besides running it (a retry on another worker)
    reason: str = ""  # its request's

    @property
    def ok(self) -> bool:
        return self.status is RunStatus.OK

    @property
    def built(self) -> Manifest:
        """The manifest of what the build left, where the caller knows it has one (a
        successful run's): typed as such, and an error naming the run where it has none."""
        if self.manifest is None:
            raise ValueError(f"{self.kind.value} run {self.index} ({self.status.value}) left no manifest")
        return self.manifest

    @property
    def trace_file(self) -> str:
        """The strace output of a traced run, where the caller knows it was traced: typed as
        such, and an error naming the run where it has none."""
        if self.trace_path is None:
            raise ValueError(f"{self.kind.value} run {self.index} ({self.status.value}) left no trace")
        return self.trace_path
