"""The executor interface: how the campaign gets builds run, wherever they run.

An executor takes `RunRequest`s and gives back `RunRecord`s (`submit` → a future,
`as_completed` yields futures as their runs end; `run` waits for one). It keeps what a finished run left where the run happened until the
campaign asks for it: one file (`fetch`, for the differing variants), the whole tree
(`keep_tree`, for the reference; `set_aside` and `reuse_tree`, for a traced tree one
phase leaves the next), or a step session (`step_session`: replays of single
steps next to the tree they need). A run's tree stays available until the next request
goes to the same slot, and the campaign asks for what it needs before submitting more.

Implementations: `LocalExecutor` (this machine), `FakeExecutor` (the tests: manifests
computed from the perturbation, no process at all), and `DaskExecutor` when installed.
No executor holds campaign state: the campaign, its store and its budget stay with the
caller.
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Iterable, Iterator, Protocol

from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.step_replay import StepCall, StepReplayer

__all__ = ["Executor", "StepSession"]


class StepSession(Protocol):
    """Replays of single steps in the tree a run left (the traced reference's)."""

    def replayer(self, call: StepCall, cpus: tuple[int, ...]) -> StepReplayer: ...


class Executor(Protocol):
    slots: int  # builds it runs at once

    def submit(self, request: RunRequest) -> Future[RunRecord]: ...

    def as_completed(self, futures: Iterable[Future[RunRecord]]) -> Iterator[Future[RunRecord]]: ...

    def run(self, request: RunRequest) -> RunRecord: ...

    def fetch(self, record: RunRecord, path: str, dest: Path) -> bool:
        """Copy one file of the tree `record`'s run left to `dest`; False if it cannot."""
        ...

    def keep_tree(self, record: RunRecord, dest: Path) -> bool:
        """Move (or copy) the whole tree `record`'s run left to `dest`; False if it cannot."""
        ...

    def set_aside(self, record: RunRecord, dest: Path) -> bool:
        """Keep the tree `record`'s run left at `dest`, for a later executor of the same spec
        to `reuse_tree`; False if it cannot (its trees are elsewhere, or not whole)."""
        ...

    def reuse_tree(self, record: RunRecord, kept: Path) -> bool:
        """Put a tree `set_aside` kept back where this executor's runs build, as `record`'s
        (for `fetch` and `step_session`); False if it cannot."""
        ...

    def step_session(self, record: RunRecord) -> StepSession: ...

    def close(self) -> None: ...
