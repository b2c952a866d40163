"""An executor without processes: each run's manifest follows from its perturbation.

For tests of everything above execution (schedule, budget, resume, comparison, store,
reports) in milliseconds: `outcome(perturbation)` gives the run's files (path → content
digest), or None for a failed build. Runs may finish out of order (`finish_order`), as
they do on many machines, so labels and stored order can be checked against it.
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Callable, Iterable, Iterator

from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.model import RunStatus
from fuzzer.observe import Entry, Manifest
from fuzzer.plan import Perturbation

Outcome = Callable[[Perturbation], dict[str, str] | None]


class FakeExecutor:
    def __init__(self, outcome: Outcome, wall_s: float = 1.0, slots: int = 1,
                 clock: Callable[[float], None] | None = None):
        self.outcome, self.wall_s, self.slots = outcome, wall_s, slots
        self.clock = clock  # called with each run's wall time: a test's fake clock advances by it
        self.requests: list[RunRequest] = []
        self._pending: list[tuple[Future[RunRecord], RunRequest]] = []

    def submit(self, request: RunRequest) -> Future[RunRecord]:
        """Held back until someone waits: then the last submitted finishes first."""
        future: Future[RunRecord] = Future()
        self.requests.append(request)
        self._pending.append((future, request))
        return future

    def as_completed(self, futures: Iterable[Future[RunRecord]]) -> Iterator[Future[RunRecord]]:
        waiting = list(futures)
        finished = self._drain()
        yield from [f for f in finished if f in waiting] + [f for f in waiting if f not in finished]

    def run(self, request: RunRequest) -> RunRecord:
        future = self.submit(request)
        self._drain()
        return future.result()

    def _drain(self) -> list[Future[RunRecord]]:
        finished = []
        while self._pending:
            future, request = self._pending.pop()
            future.set_result(self._record(request))
            finished.append(future)
        return finished

    def _record(self, request: RunRequest) -> RunRecord:
        files = self.outcome(request.perturbation)
        if self.clock is not None:
            self.clock(self.wall_s)
        manifest = None if files is None else Manifest({p: Entry("file", d, size=1) for p, d in files.items()})
        return RunRecord(
            index=request.index,
            perturbation=request.perturbation,
            status=RunStatus.OK if files is not None else RunStatus.FAILED,
            exit_code=0 if files is not None else 2,
            wall_s=self.wall_s,
            manifest=manifest,
            log_path="",
            kind=request.kind,
            reason=request.reason,
            host="fake",
        )

    def fetch(self, record: RunRecord, path: str, dest: Path) -> bool:
        return False  # nothing was written anywhere

    def keep_tree(self, record: RunRecord, dest: Path) -> bool:
        return False

    def set_aside(self, record: RunRecord, dest: Path) -> bool:
        return False

    def reuse_tree(self, record: RunRecord, kept: Path) -> bool:
        return False

    def step_session(self, record: RunRecord):
        raise NotImplementedError("the fake executor runs no steps: test localization with real builds")

    def close(self) -> None:
        self._drain()
