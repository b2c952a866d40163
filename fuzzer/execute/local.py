"""The local executor: builds on this machine, one at a time, in one workspace.

A run is: fresh workspace → the command under the perturbation (jobs, affinity,
jitter, optionally strace) inside the guard → manifest of what it left. `submit` runs
the build in the calling thread (so Ctrl-C reaches the wait, and the guard ends the
build) and hands back a finished future; the tree stays in the workspace until the
next request, for `fetch`, `keep_tree` and step sessions.
"""

from __future__ import annotations

import os
import shutil
import time
from concurrent.futures import Future, as_completed
from dataclasses import dataclass
from pathlib import Path

from fuzzer import axes
from fuzzer.execute.guard import BuildExit, Guard, GuardError
from fuzzer.execute.jitter import Jitter, JitterEvent
from fuzzer.execute.logs import log_tail, note, trim_log
from fuzzer.execute.parallelism import parallel_env
from fuzzer.execute.run import RunRecord, RunRequest, Status
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.execute.workspace import Workspace
from fuzzer.observe import take_manifest
from fuzzer.plan import Perturbation
from fuzzer.tools import strace

# Without --timeout, runs after the reference are ended after max(10 × its wall time, 300 s).
# The reference runs at -j1, the slowest schedule; jitter slows a build at most 2×.
TIMEOUT_FACTOR = 10
TIMEOUT_FLOOR_S = 300.0


@dataclass(frozen=True)
class BuildSpec:
    """What every run of a campaign builds, and where."""

    command: str  # template; {jobs} is substituted
    workspace: Workspace
    logs: Path
    timeout: float | None = None  # the user's --timeout; a request may carry a default instead
    env: tuple[tuple[str, str], ...] = ()


class LocalExecutor:
    slots = 1  # one workspace at one path: one build at a time

    def __init__(self, spec: BuildSpec):
        self.spec = spec
        self._guard: Guard | None = None

    def __enter__(self) -> "LocalExecutor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def guard(self) -> Guard:
        if self._guard is not None and not self._guard.alive:
            self.close()  # it died between runs (and swept what it left): start a fresh one
        if self._guard is None:
            self._guard = Guard()
        return self._guard

    def close(self) -> None:
        if self._guard is not None:
            self._guard.close()
            self._guard = None

    def submit(self, request: RunRequest) -> Future[RunRecord]:
        future: Future[RunRecord] = Future()
        future.set_result(self.run(request))
        return future

    def as_completed(self, futures):
        return as_completed(list(futures))

    def fetch(self, record: RunRecord, path: str, dest: Path) -> bool:
        source = self.spec.workspace.path / path
        if not source.is_file():
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        return True

    def keep_tree(self, record: RunRecord, dest: Path) -> bool:
        """The tree moves (a rename, not a copy): the next run starts from a fresh copy anyway."""
        workspace = self.spec.workspace
        if workspace.in_place or dest.exists() or not workspace.path.is_dir():
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(workspace.path), str(dest))
        return True

    def step_session(self, record: RunRecord) -> "LocalStepSession":
        return LocalStepSession(self, self.spec.logs / "replays")

    def run(self, request: RunRequest) -> RunRecord:
        spec = self.spec
        perturbation = request.perturbation
        log_path = spec.logs / f"{request.stem}.log"
        spec.logs.mkdir(parents=True, exist_ok=True)
        cwd = spec.workspace.prepare()
        launch = axes.launch(spec.command, perturbation, {**os.environ, **dict(spec.env + request.env)})
        argv = list(launch.argv)
        trace_path = None
        if request.trace:
            trace_path = str(spec.logs / f"{request.stem}.strace")
            argv = strace.wrap(argv, trace_path)
        started_at, started = time.time(), time.monotonic()
        timeout = request.timeout if request.timeout is not None else spec.timeout
        with axes.mounted(perturbation, cwd):
            end, jitter = self._build(argv, str(cwd), launch, perturbation, request.trace, log_path, timeout)
        wall = time.monotonic() - started
        status = Status.TIMEOUT if end.timed_out else Status.OK if end.exit_code == 0 else Status.FAILED
        manifest = take_manifest(cwd, skip=spec.workspace.skipped())
        note(log_path, _not_copied(spec.workspace))
        note(log_path, end.note)
        trim_log(log_path)
        return RunRecord(
            index=request.index,
            perturbation=perturbation,
            status=status,
            exit_code=end.exit_code,
            wall_s=round(wall, 3),
            manifest=manifest,
            log_path=str(log_path),
            log_tail=log_tail(log_path),
            jitter=jitter,
            trace_path=trace_path,
            stragglers=end.stragglers,
            kind=request.kind,
            started_at=started_at,
        )

    def _build(self, argv: list[str], cwd: str, launch: axes.Launch, perturbation: Perturbation, trace: bool,
               log_path: Path, timeout: float | None) -> tuple[BuildExit, tuple[JitterEvent, ...]]:
        """The build under the guard and the jitter engine. A guard that died is a failed run:
        it already swept what the build left, and the next run gets a new guard."""
        guard = self.guard
        try:
            root = guard.start(argv, cwd=cwd, env=launch.env, cpus=launch.cpus, log_path=str(log_path))
            exclude = (lambda: {root}) if trace else (lambda: set())  # never stop strace itself
            with Jitter(perturbation.jitter, perturbation.seed, guard.processes, exclude=exclude) as jitter:
                return guard.wait(timeout, jitter.stopped_pids), jitter.events
        except GuardError as e:
            self.close()
            return BuildExit(exit_code=None, timed_out=False, stragglers=0, note=str(e)), ()


class LocalStepSession:
    """Step replays in the workspace, where the last run (the traced reference) left its tree."""

    def __init__(self, executor: LocalExecutor, logs: Path):
        self.executor, self.logs = executor, logs

    def replayer(self, call: StepCall, cpus: tuple[int, ...]) -> StepReplayer:
        return StepReplayer(self.executor.guard, self.executor.spec.workspace.path, call, cpus, self.logs)


def default_timeout(user_timeout: float | None, reference_wall_s: float) -> float:
    """The user's --timeout, else the default for runs after the reference."""
    if user_timeout is not None:
        return user_timeout
    return max(TIMEOUT_FACTOR * reference_wall_s, TIMEOUT_FLOOR_S)


def build_env(jobs: int, extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    env = dict(os.environ)
    env.update(parallel_env(jobs, env))
    env.update(dict(extra))
    return env


def _not_copied(workspace: Workspace) -> str:
    skipped = ", ".join(f"{path} ({kind})" for path, kind in sorted(workspace.not_copied))
    return f"special files of the source not copied into the workspace: {skipped}" if skipped else ""
