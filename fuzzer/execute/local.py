"""The local executor: one perturbation in, one `RunRecord` out.

A run is: fresh workspace → the command under the perturbation (jobs, affinity,
jitter, optionally strace) inside the guard → manifest of what it left. The executor
holds no campaign state, so a distributed executor can take its place.
"""

from __future__ import annotations

import enum
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzer.execute.guard import BuildExit, Guard, GuardError
from fuzzer.execute.jitter import Jitter, JitterEvent
from fuzzer.execute.parallelism import command_argv, parallel_env, render_command
from fuzzer.execute.workspace import Workspace
from fuzzer.observe import Manifest, take_manifest
from fuzzer.plan import Perturbation
from fuzzer.tools import strace

LOG_TAIL_LINES = 20
LOG_LIMIT = 1 << 20  # keep the last MiB of a build's output
# Without --timeout, runs after the reference are ended after max(10 × its wall time, 300 s).
# The reference runs at -j1, the slowest schedule; jitter slows a build at most 2×.
TIMEOUT_FACTOR = 10
TIMEOUT_FLOOR_S = 300.0


class Status(enum.Enum):
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class BuildSpec:
    """What every run of a campaign builds, and where."""

    command: str  # template; {jobs} is substituted
    workspace: Workspace
    logs: Path
    timeout: float | None = None
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class RunRecord:
    index: int
    perturbation: Perturbation
    status: Status
    exit_code: int | None
    wall_s: float
    manifest: Manifest | None
    log_path: str
    log_tail: str = ""
    jitter: tuple[JitterEvent, ...] = ()
    trace_path: str | None = None
    stragglers: int = 0

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


@dataclass(frozen=True)
class RunOptions:
    """Per-run extras beyond the perturbation: tracing and environment overrides."""

    trace: bool = False
    env: tuple[tuple[str, str], ...] = ()
    label: str = ""  # distinguishes log/trace files of localization runs


class LocalExecutor:
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

    def run(self, index: int, perturbation: Perturbation, options: RunOptions = RunOptions()) -> RunRecord:
        spec = self.spec
        stem = f"run-{index:04d}{options.label}"
        log_path = spec.logs / f"{stem}.log"
        spec.logs.mkdir(parents=True, exist_ok=True)
        cwd = spec.workspace.prepare()
        argv = command_argv(render_command(spec.command, perturbation.jobs))
        trace_path = None
        if options.trace:
            trace_path = str(spec.logs / f"{stem}.strace")
            argv = strace.wrap(argv, trace_path)
        env = build_env(perturbation.jobs, spec.env + options.env)
        started = time.monotonic()
        end, jitter = self._build(argv, str(cwd), env, perturbation, options.trace, log_path)
        wall = time.monotonic() - started
        status = Status.TIMEOUT if end.timed_out else Status.OK if end.exit_code == 0 else Status.FAILED
        manifest = take_manifest(cwd, skip=spec.workspace.skipped())
        _note(log_path, _not_copied(spec.workspace))
        _note(log_path, end.note)
        _trim_log(log_path)
        return RunRecord(
            index=index,
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
        )

    def _build(self, argv: list[str], cwd: str, env: dict[str, str], perturbation: Perturbation, trace: bool,
               log_path: Path) -> tuple[BuildExit, tuple[JitterEvent, ...]]:
        """The build under the guard and the jitter engine. A guard that died is a failed run:
        it already swept what the build left, and the next run gets a new guard."""
        guard = self.guard
        try:
            root = guard.start(argv, cwd=cwd, env=env, cpus=perturbation.cpus, log_path=str(log_path))
            exclude = (lambda: {root}) if trace else (lambda: set())  # never stop strace itself
            with Jitter(perturbation.jitter, perturbation.seed, guard.processes, exclude=exclude) as jitter:
                return guard.wait(self.spec.timeout, jitter.stopped_pids), jitter.events
        except GuardError as e:
            self.close()
            return BuildExit(exit_code=None, timed_out=False, stragglers=0, note=str(e)), ()


def with_default_timeout(spec: BuildSpec, reference_wall_s: float) -> BuildSpec:
    """`spec` with the default timeout for runs after the reference, unless one was given."""
    if spec.timeout is not None:
        return spec
    return replace(spec, timeout=max(TIMEOUT_FACTOR * reference_wall_s, TIMEOUT_FLOOR_S))


def build_env(jobs: int, extra: tuple[tuple[str, str], ...] = ()) -> dict[str, str]:
    env = dict(os.environ)
    env.update(parallel_env(jobs, env))
    env.update(dict(extra))
    return env


def log_tail(path: Path | str, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 16384))
            return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _not_copied(workspace: Workspace) -> str:
    skipped = ", ".join(f"{path} ({kind})" for path, kind in sorted(workspace.not_copied))
    return f"special files of the source not copied into the workspace: {skipped}" if skipped else ""


def _note(path: Path, note: str) -> None:
    """Say in the run's log what buildfuzz did to the build, where the log tail shows it."""
    if note:
        with open(path, "a", encoding="utf-8", errors="surrogateescape") as log:  # names as their bytes
            log.write(f"\nbuildfuzz: {note}\n")


def _trim_log(path: Path) -> None:
    """Keep only the tail of a huge log: a night of runs must not fill the disk."""
    try:
        size = path.stat().st_size
        if size <= LOG_LIMIT:
            return
        with open(path, "rb") as f:
            f.seek(size - LOG_LIMIT)
            tail = f.read()
        path.write_bytes(b"[... log trimmed by buildfuzz ...]\n" + tail)
    except OSError:
        pass
