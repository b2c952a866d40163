"""The local executor: builds on this machine, one at a time, or several at once at one path.

A run is: fresh workspace → the command under the perturbation (jobs, affinity,
jitter, optionally strace) inside the guard → manifest of what it left.

One slot (the default): `submit` runs the build in the calling thread (so Ctrl-C reaches
the wait, and the guard ends the build) and hands back a finished future; the tree stays
at the campaign's path until the next request, for `fetch`, `keep_tree` and step sessions.

N slots (`--parallel N`): `submit` hands the build to one of N threads. Each slot has its
own tree, in a parent of its own (`<parent>.slots/<k>/<tree>`), its own `--output`
directories (`<parent>.slots/<k>.outputs/<i>`) and guard, and its builds run in a private
mount namespace where that parent is bind-mounted at the campaign's parent (the tree alone
at the campaign's path when the parent is not buildfuzz's) and each output directory at
its own path (fuzzer/tools/unshare.py): every build still sees the one path, and no two
builds write their packages into one directory. A slot takes a new request once
`as_completed` handed out its last run (the campaign takes what it needs of a run before submitting more); `fetch`
and `keep_tree` read the slot that ran the record. `run` stays the one-slot path — in the
calling thread, at the campaign's path, no namespace — for the reference, localization and
replays; submitted builds must be collected first (their mounts cover that path). `close`
ends every build: each slot's guard process is told to kill its build, then the threads
are joined.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path

from fuzzer import axes
from fuzzer.axis_values import Launch
from fuzzer.execute import keep
from fuzzer.execute.guard import BuildExit, Guard, GuardError
from fuzzer.execute.jitter import Jitter, JitterEvent
from fuzzer.execute.logs import log_tail, note, trim_log
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.execute.workspace import Workspace, WorkspaceError, remove_tree
from fuzzer.model import RunKind, RunStatus
from fuzzer.observe import take_manifest
from fuzzer.parallelism import parallel_env
from fuzzer.plan import Perturbation
from fuzzer.tools import strace, unshare
from fuzzer.tools.unshare import Isolation

# Without --timeout, runs after the reference are ended after max(10 × its wall time, 300 s).
# The reference runs at -j1, the slowest schedule; jitter slows a build at most 2×.
TIMEOUT_FACTOR = 10
TIMEOUT_FLOOR_S = 300.0

RunKey = tuple[RunKind, int]


@dataclass(frozen=True)
class BuildSpec:
    """What every run of a campaign builds, and where."""

    command: str  # template; {jobs} is substituted
    workspace: Workspace
    logs: Path
    timeout: float | None = None  # the user's --timeout; a request may carry a default instead
    env: tuple[tuple[str, str], ...] = ()
    # the environment builds start from; None: this process's (a Dask worker passes its client's)
    environ: tuple[tuple[str, str], ...] | None = None


class RunCancelled(Exception):
    """The executor closed while this run was being prepared or built: there is no record."""


class _Slot:
    """Where builds run one at a time: a tree and the guard that owns its builds."""

    def __init__(self, workspace: Workspace | None = None):
        self.workspace = workspace  # None: the spec's own, at the campaign's path (no namespace)
        self.holds: RunKey | None = None  # the run whose tree is there now
        self._guard: Guard | None = None

    def guard(self) -> Guard:
        if self._guard is not None and not self._guard.alive:
            self.close()  # it died between runs (and swept what it left): start a fresh one
        if self._guard is None:
            self._guard = Guard()
        return self._guard

    def interrupt(self) -> None:
        """Have the guard kill its build, whichever thread waits on it."""
        if self._guard is not None:
            self._guard.interrupt()

    def close(self) -> None:
        if self._guard is not None:
            self._guard.close()
            self._guard = None


class LocalExecutor:
    def __init__(self, spec: BuildSpec, slots: int = 1, isolation: Isolation | None = None):
        """`slots` > 1 needs `isolation`: how a build gets its own mount namespace here."""
        if slots > 1 and (isolation is None or spec.workspace.in_place):
            raise ValueError("several slots need mount namespaces and a copied tree (not --in-place)")
        self.spec, self.slots, self.isolation = spec, slots, isolation
        self._serial = _Slot()
        self._parallel = [_Slot(self._slot_workspace(k)) for k in range(slots)] if slots > 1 else []
        self._free = list(self._parallel)
        self._busy: dict[Future[RunRecord], _Slot] = {}  # submitted, not yet handed out by as_completed
        self._slot_of: dict[RunKey, _Slot] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()  # `_closing` against a slot starting a guard
        self._closing = False

    def __enter__(self) -> "LocalExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def guard(self) -> Guard:
        """The guard of the one-slot path (`run`, step sessions)."""
        return self._guard_of(self._serial)

    def _guard_of(self, slot: _Slot) -> Guard:
        with self._lock:
            if self._closing:
                raise RunCancelled("the executor is closing")
            return slot.guard()

    def close(self) -> None:
        """Kill every build, join the threads, remove the slots' trees. The executor can run again."""
        with self._lock:
            self._closing = True  # from now on no slot starts a guard, so no build
        for slot in self._parallel:
            slot.interrupt()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        for slot in [self._serial, *self._parallel]:
            slot.close()
        if self._parallel:
            remove_tree(self._slots_root())
        self._free, self._busy = list(self._parallel), {}
        self._closing = False

    def submit(self, request: RunRequest) -> Future[RunRecord]:
        if not self._parallel:
            future: Future[RunRecord] = Future()
            future.set_result(self.run(request))
            return future
        if not self._free:
            raise RuntimeError(f"all {self.slots} slots are busy: take a finished run from as_completed first")
        slot = self._free.pop(0)
        self._pool = self._pool or ThreadPoolExecutor(self.slots, thread_name_prefix="buildfuzz-slot")
        future = self._pool.submit(self._run_in, slot, request)
        self._busy[future] = slot
        return future

    def as_completed(self, futures):
        """Futures as their runs end; a run handed out frees its slot for the next submit."""
        for future in as_completed(list(futures)):
            slot = self._busy.pop(future, None)
            if slot is not None:
                self._free.append(slot)
            yield future

    def fetch(self, record: RunRecord, path: str, dest: Path) -> bool:
        workspace = self._tree_of(record)
        source = workspace.locate(path) if workspace else None
        if source is None or not source.is_file():
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest)
        return True

    def keep_tree(self, record: RunRecord, dest: Path) -> bool:
        """The tree moves (a rename, not a copy): the next run starts from a fresh copy anyway."""
        workspace = self._tree_of(record)
        if workspace is None or workspace.in_place or dest.exists() or not workspace.path.is_dir():
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(workspace.path), str(dest))
        workspace.move_parent_outputs(dest.parent)
        self._slot_of[(record.kind, record.index)].holds = None
        return True

    def set_aside(self, record: RunRecord, dest: Path) -> bool:
        """Only a whole tree: --output directories are not kept, so their files would be
        another run's when the tree comes back."""
        return not self.spec.workspace.outputs and self.keep_tree(record, dest)

    def reuse_tree(self, record: RunRecord, kept: Path) -> bool:
        if self._busy or not self.spec.workspace.take_back(kept):
            return False
        key = (record.kind, record.index)
        self._serial.holds, self._slot_of[key] = key, self._serial
        return True

    def step_session(self, record: RunRecord) -> "LocalStepSession":
        if self._slot_of.get((record.kind, record.index), self._serial) is not self._serial:
            raise ValueError("step replays need a tree built by run(), at the campaign's path")
        return LocalStepSession(self, self.spec.logs / "replays")

    def run(self, request: RunRequest) -> RunRecord:
        if self._busy:
            raise RuntimeError("run() builds at the path submitted builds mount their trees on: collect them first")
        return self._run_in(self._serial, request)

    def _tree_of(self, record: RunRecord) -> Workspace | None:
        """The workspace holding `record`'s tree, if no later run replaced it."""
        key = (record.kind, record.index)
        slot = self._slot_of.get(key)
        return self._workspace_of(slot) if slot is not None and slot.holds == key else None

    def _workspace_of(self, slot: _Slot) -> Workspace:
        return slot.workspace or self.spec.workspace

    def _slots_root(self) -> Path:
        """Next to the campaign's parent (in it, a run would empty it), in the store too."""
        parent = self.spec.workspace.path.parent
        return parent.with_name(parent.name + ".slots")

    def _slot_workspace(self, k: int) -> Workspace:
        root, campaign = self._slots_root(), self.spec.workspace
        outputs = tuple(replace(o, backing=root / f"{k}.outputs" / str(i)) for i, o in enumerate(campaign.outputs))
        return replace(campaign, path=root / str(k) / campaign.path.name, outputs=outputs, not_copied=[])

    def _run_in(self, slot: _Slot, request: RunRequest) -> RunRecord:
        spec = self.spec
        workspace = self._workspace_of(slot)
        key = (request.kind, request.index)
        slot.holds, self._slot_of[key] = key, slot
        perturbation = request.perturbation
        log_path = spec.logs / f"{request.stem}.log"
        spec.logs.mkdir(parents=True, exist_ok=True)
        cwd = workspace.prepare()
        base = os.environ if spec.environ is None else dict(spec.environ)
        launch = axes.launch(spec.command, perturbation, {**base, **dict(spec.env + request.env)}, spec.workspace.path)
        argv = list(launch.argv)
        trace_path: str | None = None
        stash: tuple[Path, ...] = ()
        if request.trace:
            trace_path = str(spec.logs / f"{request.stem}.strace")
            argv = strace.wrap(argv, trace_path)
            # what the build removes, kept for the replays on the reference's tree (execute/keep.py),
            # and in a divergent one as evidence of what it made (a compile's object in a random
            # directory its wrapper removed: explain/build_path.py)
            if request.kind in (RunKind.TRACE_REFERENCE, RunKind.TRACE) and not keep.problem():
                stash = keep.open_stash(trace_path, launch.env)
                launch = replace(launch, env=keep.environment(stash, launch.env))
        argv = self._entered(slot, argv, cwd, launch.env)
        started_at, started = time.time(), time.monotonic()
        timeout = request.timeout if request.timeout is not None else spec.timeout
        try:
            with axes.mounted(perturbation, cwd):
                end, jitter = self._build(slot, argv, str(cwd), launch, perturbation, request.trace, log_path, timeout)
        finally:
            if stash and trace_path:
                keep.settle(stash, trace_path)
        if self._closing:
            raise RunCancelled("the executor closed during the build")
        wall = time.monotonic() - started
        status = RunStatus.TIMEOUT if end.timed_out else RunStatus.OK if end.exit_code == 0 else RunStatus.FAILED
        manifest = take_manifest(cwd, skip=workspace.skipped()).joined(workspace.outside_manifest())
        note(log_path, _not_copied(workspace))
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
            reason=request.reason,
            started_at=started_at,
        )

    def _entered(self, slot: _Slot, argv: list[str], tree: Path, env: dict[str, str]) -> list[str]:
        """A parallel slot's build (strace included, so its trace shows the campaign's path)
        runs in its own mount namespace, its tree (in its parent) and outputs mounted at the
        campaign's; a build whose tree is seen elsewhere too (`Workspace.seen_at`) in one where
        its own fresh tree is bound there as well, so what it writes there stays in that tree."""
        campaign, own = self.spec.workspace, self._workspace_of(slot)
        seen = ((tree, campaign.seen_at),) if campaign.seen_at is not None else ()
        if slot is self._serial and not seen:
            return argv
        isolation = self.isolation or unshare.isolation()
        if isolation is None:
            raise WorkspaceError(f"the source cannot be seen at {campaign.seen_at}: {unshare.UNSHARE.problem()}")
        mounts = [(own.path.parent, campaign.path.parent) if campaign.parent_outputs else (tree, campaign.path)]
        mounts += [(mine.backing, Path(theirs.shown)) for mine, theirs in zip(own.outputs, campaign.outputs)]
        mounts[0][1].mkdir(parents=True, exist_ok=True)
        return isolation.wrap(argv, *mounts[0], env, also=(*mounts[1:], *seen), cwd=campaign.path)

    def _build(self, slot: _Slot, argv: list[str], cwd: str, launch: Launch, perturbation: Perturbation,
               trace: bool, log_path: Path, timeout: float | None) -> tuple[BuildExit, tuple[JitterEvent, ...]]:
        """The build under the guard and the jitter engine. A guard that died is a failed run:
        it already swept what the build left, and the next run gets a new guard."""
        guard = self._guard_of(slot)
        try:
            root = guard.start(argv, cwd=cwd, env=launch.env, cpus=launch.cpus, log_path=str(log_path))
            exclude = (lambda: {root}) if trace else (lambda: set())  # never stop strace itself
            with Jitter(perturbation.jitter, perturbation.seed, guard.processes, exclude=exclude) as jitter:
                return guard.wait(timeout, jitter.stopped_pids), jitter.events
        except GuardError as e:
            slot.close()
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
