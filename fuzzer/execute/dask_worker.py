"""What a Dask worker does for buildfuzz: builds, kept trees, step replays.

A build task runs `LocalExecutor(spec).run(request)` here, so the axes, the jitter
engine and the guard apply exactly as on the campaign's machine, at the campaign's one
path (`<store>/workspace/<name>`, created on this host). Several workers on one host
take turns at that path (an exclusive lock on its parent directory); after each build
the tree moves (a rename) to this worker's own place beside it, where `fetch`,
`keep_tree` and the files step replays need find it until this worker's next build.

A step replay runs on any worker, in a tree of its own holding only the files the step
looked at (`fuzzer.execute.step_files`), each sent by digest from the worker holding the
traced tree to this worker's file cache, once: a file the cache holds is not sent again.
With mount namespaces the step's tree, in a parent directory of its own, is mounted there
at the campaign's path's parent in a namespace of the step's own, where its guard lives
(`holding`), so replays on one host run at once and a step writing `../x` writes its own
parent, not the one this host's builds share; without, it is moved to the path under the
host's lock for as long as the replays run, one at a time.

The client holds every task's future. When the client goes away (SIGKILL, a lost
network) the scheduler releases its futures and a running task here is cancelled: a
watch thread sees that and has the guard kill the build within WATCH_S. A worker that
dies takes its builds with it: each guard kills its tree when its parent exits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
import weakref
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator

from distributed import Variable, get_worker
from distributed.worker import thread_state

from fuzzer.execute.guard import Guard
from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.execute.logs import log_tail, note
from fuzzer.execute.run import RunRecord, RunRequest
from fuzzer.execute.source_archive import tar_tree, unpack_once
from fuzzer.execute.replay_slots import holding
from fuzzer.execute.step_files import FileCache, StepFile, build_tree, read_checked
from fuzzer.execute.step_replay import ReplayOutcome, StepCall, StepReplayer, Variation
from fuzzer.execute.workspace import Workspace
from fuzzer.tools import unshare

ARCHIVE_WAIT_S = 600  # fetching the source archive from the scheduler; it is there before any build
ATTEMPTS_TOPIC = "buildfuzz-attempts"  # every start of a build task: which worker took it
WATCH_S = 0.5  # how often a running build checks that its client still wants it
LIVE_STATES = frozenset({"executing", "long-running", "resumed"})  # a task still wanted, as a worker sees it
KEPT = ".buildfuzz-kept"  # beside the campaign's path: each worker's last tree
FILES = "buildfuzz-files"  # in a worker's local directory: the files step replays were sent, by digest

_EXECUTORS: dict[BuildSpec, LocalExecutor] = {}  # this worker process's, one per campaign it builds for


@dataclass(frozen=True)
class Site:
    """What every build of one campaign needs on a worker, whichever worker it is."""

    command: str
    path: str  # the campaign's one build path, the same on every host
    exclude: tuple[str, ...]  # absolute paths never copied into a workspace (the store)
    environ: tuple[tuple[str, str], ...]  # the client's environment: builds start from it, not the worker's
    env: tuple[tuple[str, str], ...]  # the campaign's extra variables
    timeout: float | None  # the user's --timeout
    shared_source: str | None  # a source directory every worker reads; None: the archive
    digest: str | None  # the source archive's sha256, when there is one
    archive: str | None  # the Dask Variable (on the scheduler) holding the archive
    source_note: str = ""  # special files the archive left out, for each run's log


@dataclass(frozen=True)
class WorkerRun:
    """A build's record as the worker made it, with the files the client keeps."""

    record: RunRecord  # log_path and trace_path are this worker's
    worker: str  # its address
    log: bytes
    trace: bytes | None  # zlib-compressed strace output, for traced runs


# ---------------------------------------------------------------- builds


def run_build(site: Site, request: RunRequest, run_id: str) -> WorkerRun:
    """One build of the campaign on this worker (the body of a Dask task)."""
    worker, key = get_worker(), thread_state.key
    worker.log_event(ATTEMPTS_TOPIC, {"key": key, "worker": worker.address})
    source = _source(site, worker.local_directory)
    place = Place(site.path, worker.id)
    logs = Path(worker.local_directory) / "buildfuzz-logs" / _safe(site.path)
    spec = BuildSpec(site.command, Workspace(source, Path(site.path), exclude=_paths(site.exclude)), logs,
                     site.timeout, site.env, environ=site.environ)
    with place.locked():
        record = _watched_run(_executor(spec), request, lambda: _task_wanted(worker, key))
        place.keep(run_id)
    return _collected(record, site, worker.address)


def _source(site: Site, local_directory: str) -> Path:
    """The source directory to copy workspaces from: the shared one, or this worker's
    unpacked copy of the archive (fetched from the scheduler on a worker's first build)."""
    if site.shared_source is not None:
        return Path(site.shared_source)
    return unpack_once(site.digest, _sources(local_directory), lambda: Variable(site.archive).get(ARCHIVE_WAIT_S))


def _sources(local_directory: str) -> Path:
    return Path(local_directory) / "buildfuzz-sources"


def _executor(spec: BuildSpec) -> LocalExecutor:
    """This worker process's executor for `spec`, kept between builds: a new one would
    start a new guard process for every build (~75 ms)."""
    if spec not in _EXECUTORS:
        _EXECUTORS[spec] = LocalExecutor(spec)
    return _EXECUTORS[spec]


def _watched_run(executor: LocalExecutor, request: RunRequest, wanted: Callable[[], bool]) -> RunRecord:
    with Watch(wanted, executor.guard):  # a guard it interrupts dies: the executor starts another next time
        return executor.run(request)


def _collected(record: RunRecord, site: Site, address: str) -> WorkerRun:
    """The log (with the archive's note on special files) and the trace, taken off this
    worker: they go to the client with the record."""
    log_path = Path(record.log_path)
    note(log_path, site.source_note)
    trace = _taken(Path(record.trace_path)) if record.trace_path else None
    record = replace(record, log_tail=log_tail(log_path))
    return WorkerRun(record, address, _taken(log_path), zlib.compress(trace, 1) if trace is not None else None)


def _taken(path: Path) -> bytes:
    data = path.read_bytes()
    path.unlink()
    return data


def _task_wanted(worker, key: str) -> bool:
    task = worker.state.tasks.get(key)
    return task is not None and task.state in LIVE_STATES


def _paths(texts: tuple[str, ...]) -> frozenset[Path]:
    return frozenset(Path(t) for t in texts)


class Watch:
    """Has `guard` kill its build once `wanted()` turns false: the client went away or
    cancelled the run. A thread, because the build's own thread waits on the guard."""

    def __init__(self, wanted: Callable[[], bool], guard: Guard):
        self.wanted, self.guard = wanted, guard
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="buildfuzz-watch", daemon=True)

    def __enter__(self) -> "Watch":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_S):
            if not self.wanted():
                self.guard.interrupt()
                return


# ---------------------------------------------------------------- kept trees


class Place:
    """The campaign's build path on this host, and this worker's kept tree beside it."""

    def __init__(self, path: str, worker_id: str):
        self.path = Path(path)
        self.slot = self.path.parent / KEPT / _safe(worker_id) / self.path.name
        self.tree, self.stamp = self.slot / "tree", self.slot / "run"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The path to ourselves: the other workers of this host wait (a lock that dies with
        its process, so a killed worker never leaves it taken)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def keep(self, run_id: str) -> None:
        """Move the tree the build left at the path to this worker's slot."""
        self.forget()
        self.slot.mkdir(parents=True, exist_ok=True)
        if self.path.is_dir():
            os.rename(self.path, self.tree)
        self.stamp.write_text(run_id)

    def holds(self, run_id: str) -> bool:
        try:
            return self.stamp.read_text() == run_id and self.tree.is_dir()
        except OSError:
            return False

    @contextlib.contextmanager
    def lent(self, tree: Path) -> Iterator[Path]:
        """`tree` at the path (a replay without a mount namespace needs it there), then back."""
        with self.locked():
            _remove(self.path)
            os.rename(tree, self.path)
            try:
                yield self.path
            finally:
                os.rename(self.path, tree)

    def forget(self) -> None:
        _remove(self.tree)
        self.stamp.unlink(missing_ok=True)


def _remove(tree: Path) -> None:
    """As a workspace is removed: read-only directories a build left are made writable first."""
    Workspace(source=tree.parent, path=tree).remove()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def read_kept(site: Site, run_id: str, path: str) -> bytes | None:
    """One file of `run_id`'s tree (a pinned task); None when it is gone or no file."""
    place = Place(site.path, get_worker().id)
    file = place.tree / path
    if not place.holds(run_id) or not file.is_file():
        return None
    return file.read_bytes()


def tar_kept(site: Site, run_id: str) -> bytes | None:
    """`run_id`'s whole tree as a tar (a pinned task); None when it is gone."""
    place = Place(site.path, get_worker().id)
    if not place.holds(run_id):
        return None
    return tar_tree(place.tree)


def forget(paths: list[str], digests: list[str], dask_worker=None) -> None:
    """Remove this worker's kept trees of these build paths, its unpacked copies of these
    archives and the files step replays were sent (run on every worker when the client is
    done)."""
    for digest in digests:
        _remove(_sources(dask_worker.local_directory) / digest)
    _remove(_files(dask_worker).root)
    for spec in [spec for spec in _EXECUTORS if str(spec.workspace.path) in paths]:
        _EXECUTORS.pop(spec).close()
    for path in paths:
        place = Place(path, dask_worker.id)
        place.forget()
        # the path itself too: a replay's namespace made it as its mount point
        for empty in (place.slot, place.slot.parent, place.slot.parent.parent, place.path):
            with contextlib.suppress(OSError):
                empty.rmdir()


# ---------------------------------------------------------------- step replays


def missing_files(digests: list[str]) -> list[str]:
    """Of these digests, those this worker's file cache lacks (a pinned task)."""
    return _files(get_worker()).missing(digests)


def read_file(site: Site, run_id: str, path: str, digest: str) -> bytes | None:
    """One file of `run_id`'s tree, if it still holds `digest` (a pinned task, on the worker
    that built it; its result goes straight to the worker that replays)."""
    place = Place(site.path, get_worker().id)
    return read_checked(place.tree / path, digest) if place.holds(run_id) else None


def _files(worker) -> FileCache:
    return FileCache(Path(worker.local_directory) / FILES)


class StepActor:
    """Replays of one step on this worker, in a tree of the files it looked at (a Dask
    actor: it keeps the replayer, its backups and its guard between calls). `sent`: the
    bytes of the files this worker's cache lacked, by digest (None: the traced tree is
    gone from the worker that built it)."""

    def __init__(self, site: Site, call: StepCall, cpus: tuple[int, ...], files: tuple[StepFile, ...],
                 sent: dict[str, bytes | None]):
        worker = get_worker()
        self._worker, self._key = worker, thread_state.key
        cache = _files(worker)
        for digest, data in sent.items():
            if data is None:
                raise FileNotFoundError("the traced tree is no longer on the worker that built it")
            cache.put(digest, data)
        scratch = Path(tempfile.mkdtemp(prefix="buildfuzz-replays-", dir=worker.local_directory))
        path = Path(site.path)
        # the tree in a parent of its own, mounted at the path's: a step writing `../x`
        # writes there, never beside this host's builds (the workspace's parent is theirs)
        self._tree = scratch / "parent" / path.name
        build_tree(self._tree, files, cache)
        isolation = unshare.isolation()
        self._guard = Guard(inside=holding(isolation, self._tree.parent, path.parent)) if isolation else Guard()
        self._end = weakref.finalize(self, _end_session, self._guard, scratch)
        self._place = None if isolation else Place(site.path, worker.id)
        with self._at_path() as tree:
            self._replayer = StepReplayer(self._guard, tree, call, cpus, scratch / "logs",
                                          seen_at=Path(site.path) if isolation else None)

    def replay_each(self, variations: list[Variation], times: int,
                    seen: tuple[str, ...] | None = None) -> dict[str, ReplayOutcome]:
        with self._at_path(), Watch(self._wanted, self._guard):
            return self._replayer.replay_each(variations, times, seen)

    def close(self) -> None:
        try:
            with self._at_path():
                self._replayer.close()  # what the replays wrote outside the tree is removed
        finally:
            self._end()

    def _at_path(self) -> contextlib.AbstractContextManager[Path]:
        """Where the replays find the step's tree: mounted at the path in their own
        namespace, or moved there for as long as they run."""
        return self._place.lent(self._tree) if self._place else contextlib.nullcontext(self._tree)

    def _wanted(self) -> bool:
        return self._key in self._worker.state.actors


def _end_session(guard: Guard, scratch: Path) -> None:
    """The guard ends any replay; the scratch directory holds the step's tree and the
    replayer's backups."""
    guard.close()
    _remove(scratch)


def worker_facts() -> dict:
    """What the client checks before it sends a build or a step replay here (run on every
    worker): its CPUs, and why replays cannot have mount namespaces ('' when they can)."""
    return {"cpus": sorted(os.sched_getaffinity(0)), "no_namespaces": unshare.UNSHARE.problem() or ""}
