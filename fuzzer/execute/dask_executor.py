"""The Dask executor: a campaign's builds on the workers of a Dask cluster.

`--dask tcp://scheduler:8786` connects to a running cluster; `--dask local:N` starts a
LocalCluster of N worker processes on this machine (loopback only, one thread each).
The campaign does not change: it submits `RunRequest`s and gets `RunRecord`s back.

- Each build is a Dask task needing one unit of the worker resource `builds`, so a
  worker started with `--resources builds=1` runs one build at a time; the executor's
  `slots` are the units the cluster offers. The worker side is in `dask_worker.py`; connecting in `dask_cluster.py`.
- The source reaches each worker once: as a content-addressed archive (held by the
  scheduler, which loses nothing when a worker dies; a worker fetches it with its first
  build and unpacks it into a cache named by its sha256), or read from a path every
  worker shares (`--shared-source`). Builds get this machine's environment, not the
  worker's (a Dask nanny sets PYTHONHASHSEED, OMP_NUM_THREADS, ...).
- A result carries its manifest, log and trace; they are written to the campaign's logs
  directory here, so `log_path` and `trace_path` are local. Variant files and the
  reference tree are fetched on demand from the worker that built them (a task pinned
  there), valid until that worker's next build.
- Localization runs (traces, hazard scans, shrinking, replays) go to one worker. A step
  session replays on every worker (a Dask actor per replayed step), each sent only the
  files the step looked at, by digest, from the worker holding the traced tree, and only
  those its file cache lacks (`fuzzer.execute.step_files`); without mount namespaces on
  some worker, one replay at a time.
- A worker lost mid-build: Dask runs the task again elsewhere; the record's `note` says
  so. The client lost: the scheduler cancels its tasks and the workers end the builds.
"""

from __future__ import annotations

import functools
import os
import time
import uuid
import weakref
import zlib
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator

import distributed
from distributed import Variable
from distributed.client import FutureCancelledError
from distributed.scheduler import KilledWorker

from fuzzer.errors import UsageError
from fuzzer.execute.dask_cluster import (BUILDS, SLOTS_REFRESH_S, WORKER_CHECK_S, WORKERS_WAIT_S, Attempts, connect,
                                         quiet_dask_logs, shutdown)
from fuzzer.execute.dask_worker import (ATTEMPTS_TOPIC, Site, StepActor, WorkerRun, missing_files, read_file,
                                        read_kept, run_build, tar_kept, worker_facts)
from fuzzer.execute.local import BuildSpec, _not_copied
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.source_archive import extract, pack
from fuzzer.execute.step_files import digests, step_files
from fuzzer.execute.step_replay import REPLAYS, ReplayOutcome, StepCall, Variation
from fuzzer.model import RunKind, available_cpus
from fuzzer.plan import format_cpus

RunKey = tuple[RunKind, int]


class WorkerLost(RuntimeError):
    """Every worker that took a run died while building it (Dask gave up on it)."""


class SchedulerLost(RuntimeError):
    """The connection to the scheduler is gone, and with it every task of this client."""


class DaskPool:
    """The cluster a campaign's executors share (exploration, then localization): connected
    once, closed when the campaign lets go of it (or at exit). Called with a BuildSpec,
    it gives an executor, as `campaign.executor_factory` expects."""

    def __init__(self, address: str, shared_source: bool = False):
        self.address, self.shared_source = address, shared_source
        self.attempts = Attempts()
        self._paths: list[str] = []  # build paths used, whose kept trees the workers remove at the end
        self._sources: dict[tuple, tuple[str, str, Variable]] = {}  # source → (digest, note, where the archive is)
        self._slots = (float("-inf"), 1)  # (when counted, count)
        self.environ = tuple(os.environ.items())  # before a local cluster's nannies add theirs to it
        quiet_dask_logs()
        self.client, cluster = connect(address)
        self._finalizer = weakref.finalize(self, shutdown, self.client, cluster, self._paths, self._sources)
        try:
            self._check_workers()
        except BaseException:
            self.close()
            raise
        self.client.subscribe_topic(ATTEMPTS_TOPIC, self.attempts.add)

    def __call__(self, spec: BuildSpec) -> "DaskExecutor":
        return DaskExecutor(self, spec)

    def close(self) -> None:
        self._finalizer()

    def workers(self) -> list[str]:
        """The addresses of the workers that take builds, sorted."""
        info = self.client.scheduler_info()["workers"]
        return sorted(address for address, worker in info.items() if worker.get("resources", {}).get(BUILDS, 0) > 0)

    def slots(self) -> int:
        """Builds the cluster runs at once; at least 1, so a campaign waits for workers to come back."""
        counted, count = self._slots
        if time.monotonic() - counted > SLOTS_REFRESH_S:
            info = self.client.scheduler_info()["workers"].values()
            count = max(1, int(sum(worker.get("resources", {}).get(BUILDS, 0) for worker in info)))
            self._slots = (time.monotonic(), count)
        return count

    def site(self, spec: BuildSpec) -> Site:
        """What builds of `spec` need on a worker."""
        workspace = spec.workspace
        if str(workspace.path) not in self._paths:
            self._paths.append(str(workspace.path))
        site = functools.partial(Site, command=spec.command, path=str(workspace.path),
                                 exclude=tuple(sorted(map(str, workspace.exclude))), environ=self.environ,
                                 env=spec.env, timeout=spec.timeout)
        if self.shared_source:
            return site(shared_source=str(workspace.source), digest=None, archive=None)
        digest, source_note, archive = self._archive(spec)
        return site(shared_source=None, digest=digest, archive=archive.name, source_note=source_note)

    def _archive(self, spec: BuildSpec) -> tuple[str, str, Variable]:
        """Packed once per source and handed to the scheduler: data scattered to workers
        dies with the last worker holding it (and Dask keeps one replica), the scheduler's
        stays until this client drops it."""
        workspace = spec.workspace
        key = (workspace.source, workspace.exclude)
        if key not in self._sources:
            archive = pack(workspace.source, workspace.exclude, scratch=workspace.path.parent)
            skipped = _not_copied(replace(workspace, not_copied=list(archive.not_copied)))
            variable = Variable(f"buildfuzz-source-{archive.digest}-{uuid.uuid4().hex}", client=self.client)
            variable.set(archive.data, timeout=None)
            self._sources[key] = (archive.digest, skipped, variable)
        return self._sources[key]

    def on_worker(self, worker: str, function: Callable, *args):
        """`function(*args)` on that worker; None when the worker is gone."""
        future = self.pinned(worker, function, *args)
        return None if future is None else self.wait_pinned(worker, future)

    def pinned(self, worker: str, function: Callable, *args, **options) -> distributed.Future | None:
        """A task for that worker only; None when the worker is gone."""
        if worker not in self.workers():
            return None
        return self.client.submit(function, *args, workers=[worker], allow_other_workers=False, pure=False, **options)

    def wait_pinned(self, worker: str, future: distributed.Future):
        """The result of a pinned task; None if its worker goes (the task would wait for it forever)."""
        while True:
            try:
                return future.result(timeout=WORKER_CHECK_S)
            except TimeoutError:
                if worker not in self.workers():
                    future.cancel()
                    return None

    def _check_workers(self) -> None:
        """Before anything is built: workers that take builds, run buildfuzz, and have the
        CPUs the schedule draws affinity sets from (this machine's)."""
        hint = f"start workers with `dask worker {self.address} --resources {BUILDS}=1`"
        try:
            self.client.wait_for_workers(1, timeout=WORKERS_WAIT_S)
        except TimeoutError:
            raise UsageError(f"--dask: no worker joined {self.address} within {WORKERS_WAIT_S} s; {hint}") from None
        if not self.workers():
            raise UsageError(f"--dask: no worker of {self.address} offers the resource {BUILDS!r}; {hint}")
        try:
            facts = self.client.run(worker_facts)
        except Exception as e:  # whatever a worker that cannot import buildfuzz raises
            raise UsageError(f"--dask: a worker cannot run buildfuzz ({type(e).__name__}: {e}); "
                             "install buildfuzz[dask] on every worker") from None
        for worker, fact in sorted(facts.items()):
            missing = set(available_cpus()) - set(fact["cpus"])
            if missing:
                raise UsageError(f"--dask: worker {worker} lacks CPUs {format_cpus(tuple(sorted(missing)))} that the "
                                 "schedule draws from (this machine's); run buildfuzz under taskset with CPUs "
                                 "every worker has")


@dataclass(frozen=True)
class _Submitted:
    remote: distributed.Future
    request: RunRequest
    run_id: str  # names the tree the run leaves on its worker


class DaskExecutor:
    def __init__(self, pool: DaskPool, spec: BuildSpec):
        self.pool, self.spec, self.client = pool, spec, pool.client
        self.site = pool.site(spec)
        self._submitted: dict[Future[RunRecord], _Submitted] = {}
        self._trees: dict[RunKey, tuple[str, str]] = {}  # run → (worker, run id) of the tree it left
        self._pin: str | None = None  # the worker localization runs go to

    def __enter__(self) -> "DaskExecutor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def slots(self) -> int:
        return self.pool.slots()

    def submit(self, request: RunRequest) -> Future[RunRecord]:
        run_id = uuid.uuid4().hex
        remote = self.client.submit(run_build, self.site, request, run_id,
                                    key=f"buildfuzz-{request.stem}-{run_id}", resources={BUILDS: 1}, pure=False,
                                    **self._placement(request))
        future: Future[RunRecord] = Future()
        self._submitted[future] = _Submitted(remote, request, run_id)
        return future

    def as_completed(self, futures: Iterable[Future[RunRecord]]) -> Iterator[Future[RunRecord]]:
        futures = list(futures)
        yield from (f for f in futures if f.done())
        waiting = {self._submitted[f].remote: f for f in futures if not f.done()}
        for remote in distributed.as_completed(list(waiting), loop=self.client.loop):
            yield self._settle(waiting[remote])

    def run(self, request: RunRequest) -> RunRecord:
        return next(self.as_completed([self.submit(request)])).result()

    def fetch(self, record: RunRecord, path: str, dest: Path) -> bool:
        data = self._from_tree(record, read_kept, path)
        if data is None:
            return False
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        return True

    def keep_tree(self, record: RunRecord, dest: Path) -> bool:
        """A copy: the worker keeps its tree until its next build."""
        data = None if dest.exists() else self._from_tree(record, tar_kept)
        if data is None:
            return False
        extract(data, dest)
        return True

    def set_aside(self, record: RunRecord, dest: Path) -> bool:
        """Not here: a worker's tree stays on the worker, and copying it over is no saving."""
        return False

    def reuse_tree(self, record: RunRecord, kept: Path) -> bool:
        return False

    def step_session(self, record: RunRecord) -> "DaskStepSession":
        worker, run_id = self._trees[(record.kind, record.index)]
        return DaskStepSession(self.pool, self.site, worker, run_id, record.manifest)

    def close(self) -> None:
        """Cancel what still runs: the workers see it and end those builds."""
        self.client.cancel([s.remote for s in self._submitted.values()])
        self._submitted.clear()

    def _placement(self, request: RunRequest) -> dict:
        """Localization runs go to one worker (elsewhere only if it is lost): their traces
        and the tree step replays need are made on one host."""
        if request.kind is RunKind.EXPLORE:
            return {}
        self._pin = self._pin or self.pool.workers()[0]
        return {"workers": [self._pin], "allow_other_workers": True}

    def _settle(self, future: Future[RunRecord]) -> Future[RunRecord]:
        submitted = self._submitted.pop(future)
        try:
            done = submitted.remote.result()
        except KilledWorker as e:
            future.set_exception(WorkerLost(f"{submitted.request.stem} was lost: {e}"))
        except FutureCancelledError as e:  # not by us: close() drops what it cancels
            future.set_exception(SchedulerLost(
                f"{submitted.request.stem} was cancelled by the cluster ({e}); the runs so far are stored, "
                f"and `buildfuzz run --resume` continues when the scheduler at {self.pool.address} is back"))
        except Exception as e:
            future.set_exception(e)
        else:
            future.set_result(self._arrived(done, submitted))
        return future

    def _arrived(self, done: WorkerRun, submitted: _Submitted) -> RunRecord:
        """The record as the campaign knows records: its log and trace in this machine's
        logs directory, where it ran, and whether it had to be run again."""
        request = submitted.request
        self.spec.logs.mkdir(parents=True, exist_ok=True)
        log_path = self.spec.logs / f"{request.stem}.log"
        log_path.write_bytes(done.log)
        trace_path = None
        if done.trace is not None:
            trace_path = self.spec.logs / f"{request.stem}.strace"
            trace_path.write_bytes(zlib.decompress(done.trace))
        self._trees[(request.kind, request.index)] = (done.worker, submitted.run_id)
        if request.kind is not RunKind.EXPLORE:
            self._pin = done.worker  # the pinned worker was lost: stay where the tree now is
        note = self.pool.attempts.retry_note(submitted.remote.key, done.worker)
        return replace(done.record, log_path=str(log_path), trace_path=str(trace_path) if trace_path else None,
                       host=done.worker, note=note)

    def _from_tree(self, record: RunRecord, function: Callable, *args):
        where = self._trees.get((record.kind, record.index))
        if where is None:
            return None
        worker, run_id = where
        return self.pool.on_worker(worker, function, self.site, run_id, *args)


class DaskStepSession:
    """Step replays on the cluster's workers, slot k on the k-th (one actor thread each)."""

    def __init__(self, pool: DaskPool, site: Site, holder: str, run_id: str, manifest):
        self.pool, self.site, self.holder, self.run_id, self.manifest = pool, site, holder, run_id, manifest
        self.workers = pool.workers()
        unable = sorted((worker, fact["no_namespaces"])
                        for worker, fact in pool.client.run(worker_facts, workers=self.workers).items()
                        if fact["no_namespaces"])
        self.count = 1 if unable else len(self.workers)
        self.serial_reason = f"worker {unable[0][0]} has no mount namespaces ({unable[0][1]})" if unable else ""

    def replayer(self, call: StepCall, cpus: tuple[int, ...], slot: int = 0) -> "RemoteStepReplayer":
        return RemoteStepReplayer(self, self.workers[slot % len(self.workers)], call, cpus)


class RemoteStepReplayer:
    """A StepReplayer whose replays run on a worker, through a `StepActor` there; `sent`
    names the files' digests it had sent there (those the worker's cache lacked)."""

    def __init__(self, session: DaskStepSession, worker: str, call: StepCall, cpus: tuple[int, ...]):
        pool = session.pool
        self._client = pool.client
        files = step_files(call, session.manifest)
        paths = digests(files)
        missing = pool.on_worker(worker, missing_files, sorted(paths))
        if missing is None:
            raise WorkerLost(f"worker {worker} is gone: no step replays there")
        self.sent: tuple[str, ...] = tuple(missing)
        # keyed by digest: replays on two workers that lack one file share one read of it
        sent = {d: pool.pinned(session.holder, read_file, session.site, session.run_id, paths[d], d,
                               key=f"buildfuzz-file-{d}") for d in self.sent}
        if any(future is None for future in sent.values()):
            raise WorkerLost(f"worker {session.holder}, which holds the traced tree, is gone: no step replays")
        # the actor lives as long as its future is held
        self._future = pool.pinned(worker, StepActor, session.site, call, cpus, files, sent, actor=True)
        self._actor = None if self._future is None else pool.wait_pinned(worker, self._future)
        if self._actor is None:
            raise WorkerLost(f"worker {worker} is gone: no step replays there")

    def __enter__(self) -> "RemoteStepReplayer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def replay(self, variation: Variation = Variation("plain"), times: int = REPLAYS,
               seen: tuple[str, ...] | None = None) -> ReplayOutcome:
        return self.replay_each([variation], times, seen)[variation.name]

    def replay_each(self, variations: list[Variation], times: int,
                    seen: tuple[str, ...] | None = None) -> dict[str, ReplayOutcome]:
        with self._client.as_current():  # an actor's proxy finds its client as the current one
            return self._actor.replay_each(variations, times, seen).result()

    def close(self) -> None:
        if self._actor is not None:
            try:
                with self._client.as_current():
                    self._actor.close().result()
            except OSError:
                pass  # the worker is gone, and its guard ended the replays with it
            self._actor = self._future = None
