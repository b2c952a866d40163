"""Replay one step, or one process of it, alone, on the reference build's final tree, and
hash its outputs.

What is replayed is a `StepCall`: a whole step, or the smallest process that wrote a
differing file, with its subtree (`fuzzer.trace.writers`), whose files may lie outside the
tree (a wheel under /tmp). A replay is faithful to the traced step or process: its own
argv, cwd and environment (make's `export`s included). Before every replay, each file it
created (absent when it started, per the trace) is removed, so a step that skips its work
when its output exists (`[ -e out ] || gen > out`, cmake's cache) does that work again,
and so is each file it looked for and missed that a later step made (`created`, then put back);
each other file it wrote or deleted is put back as the reference build left it, so a step
that appends (`>> list`) or rewrites a counter it read is not mistaken for one that
varies. Inputs another process removed before the build ended, which the traced build
kept (`fuzzer.execute.keep`), are put back before each replay where that overwrites
nothing, and removed after the last. After the last replay every file is put back as the
reference left it. A replay
that exits differently from the traced step, or that wrote none of the outputs it is
judged on (as if it found its work done), is no evidence of anything but itself: the outcome
says so, with the first lines of its log. Replays are spread over more than a second, so
a step that embeds the time in seconds does vary. A variation may move its inputs'
metadata (mtimes, modes) for its replays: they are put back after each one, so the tree
other replays see is the traced one. Given what was seen before, replays are a screen:
they stop once two outputs differ (or one fails), since more cannot change the answer.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fuzzer.execute.guard import Guard
from fuzzer.execute.logs import log_tail
from fuzzer.observe import hash_file

REPLAYS = 5
SPREAD_S = 1.2  # replays span at least this long: second-resolution clocks must tick
STEP_TIMEOUT_S = 120.0
FAILURE_LINES = 3
CANNOT_RUN = 127  # a replay whose program no longer exists exits as a shell's would
BACKED_UP = "tree"  # the tree's files under it, so the parent's (`../x.deb`) stay in the backup too
OUTSIDE = "outside-tree"  # files elsewhere (a process's output under /tmp), by their absolute path

Wrapper = Callable[[list[str]], list[str]]


@dataclass(frozen=True)
class MovedMetadata:
    """Inputs' metadata moved for a replay, computed from the tree at replay time (so a
    replay on another machine moves its own copy)."""

    paths: tuple[str, ...]  # relative to the tree
    mtime_shift_ns: int = 0  # every mtime moved by this
    mtime_reversed: bool = False  # their mtimes' order reversed: the latest gets the earliest, a second apart
    mode_xor: int = 0  # mode bits flipped


@dataclass(frozen=True)
class Variation:
    """One way to run the step: extra environment and argv wrappers (setarch, faketime),
    and inputs whose metadata are moved for its replays."""

    name: str
    env: tuple[tuple[str, str], ...] = ()
    wrappers: tuple[Wrapper, ...] = ()
    cpus: tuple[int, ...] | None = None
    moved: MovedMetadata | None = None
    # how long one replay may run, when more than STEP_TIMEOUT_S: a traced replay's tracer
    # budget and what the step does after it (a replay past its limit is killed, checking nothing)
    timeout_s: float = 0.0


@dataclass(frozen=True)
class ReplayOutcome:
    digests: tuple[str, ...]  # digest of the compared outputs, one per replay
    exit_codes: tuple[int | None, ...]
    expected_exit: int | None  # the traced step's exit code
    failure: str = ""  # first lines of the log of the first replay that exited differently
    idle: tuple[bool, ...] = ()  # per replay: it wrote none of the compared outputs
    contents: tuple[dict[str, str | None], ...] = ()  # per replay: each compared output's digest (None: absent)

    @property
    def distinct(self) -> int:
        return len(set(self.digests))

    @property
    def failed(self) -> bool:
        """A replay exited differently from the traced step, or did no work: no check either way."""
        return any(code != self.expected_exit for code in self.exit_codes) or any(self.idle)

    @property
    def varies(self) -> bool:
        return self.distinct > 1

    @property
    def stable(self) -> bool:
        """Every replay ran as the traced step did and gave the same bytes."""
        return not self.failed and not self.varies


@dataclass(frozen=True)
class StepCall:
    """What the trace says the step was: enough to run it again."""

    argv: tuple[str, ...]
    cwd: str  # relative to the tree
    env: dict[str, str]
    exit_code: int | None
    restored: tuple[str, ...]  # every file it wrote or deleted, relative to the tree (or absolute)
    compared: tuple[str, ...]  # the outputs whose bytes are compared across replays
    what: str = "step"  # what the call runs ("step", "process"): names its replay logs
    # what it read or found by a probe, and the directories it listed (relative to the tree,
    # or absolute): all a replay away from the traced tree is given of it (step_files.py)
    looked_at: tuple[str, ...] = ()
    listed: tuple[str, ...] = ()
    created: tuple[str, ...] = ()  # of `restored`, those absent when it started: removed before each replay
    # inputs another process removed before the build ended: (path, the file their kept
    # bytes are in), put back before each replay and removed after the last (execute/keep.py)
    brought_back: tuple[tuple[str, str], ...] = ()
    # directories a process it descends from made and removed (its TMPDIR): made, empty,
    # before each replay and removed after the last (fuzzer.trace.restore.handed_down)
    made_dirs: tuple[str, ...] = ()

    @property
    def writes_outside(self) -> bool:
        """It writes, deletes, or is given, a path outside its tree (under /tmp, $HOME): one
        path for every replay slot, so two of its replays cannot run at once."""
        given = (*self.restored, *self.made_dirs, *(path for path, _ in self.brought_back))
        return any(path.startswith("/") for path in given)


class StepReplayer:
    """Replays one step; a context manager, because it backs up the files it restores."""

    def __init__(self, guard: Guard, tree: Path, call: StepCall, cpus: tuple[int, ...], logs: Path,
                 turns: contextlib.AbstractContextManager | None = None, seen_at: Path | None = None):
        """`seen_at`: where the guard's builds see `tree`, when the guard lives in a mount
        namespace with `tree` at the campaign's path (a replay slot's, or a Dask worker's
        step's: `fuzzer.execute.replay_slots.holding`); `turns`: held while each replay
        runs (the CPUs replays share with other slots' replays)."""
        self.guard, self.tree, self.call, self.cpus, self.logs = guard, tree, call, cpus, logs
        self.seen_at = seen_at or tree
        self.turns = turns or contextlib.nullcontext()
        logs.mkdir(parents=True, exist_ok=True)
        self._backup = Path(tempfile.mkdtemp(prefix="step-outputs-", dir=logs))
        self._runs = 0
        # directories a replay may create (its output's, under /tmp): removed again at close
        self._placed = self._placeable()
        self._made_dirs = [d for d in call.made_dirs if self._may_place(self.tree / d)]
        self._absent_dirs = sorted({str(d) for rel in (*call.restored, *self._placed) for d in (self.tree / rel).parents
                                    if not d.exists()}, key=len, reverse=True)
        for rel in call.restored:
            src = self.tree / rel
            if src.is_file() and not src.is_symlink():
                dst = self._saved(rel)
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)

    def __enter__(self) -> "StepReplayer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Put back what the replays changed (a process may write outside the tree: nothing
        is left there), then drop the backups, which can be as large as the outputs."""
        try:
            if self._runs:
                self._restore()
                for rel in self._placed:
                    (self.tree / rel).unlink(missing_ok=True)
                for directory in self._made_dirs:
                    shutil.rmtree(self.tree / directory, ignore_errors=True)
                for directory in self._absent_dirs:  # deepest first; only if the replays left it empty
                    with contextlib.suppress(OSError):
                        os.rmdir(directory)
        finally:
            shutil.rmtree(self._backup, ignore_errors=True)

    def _placeable(self) -> dict[str, str]:
        """The removed inputs this replayer may put back: never over a file that is there (a
        user's, or another replay's); outside the tree only where the parent is gone too,
        or is the build's temporary directory."""
        return {rel: kept for rel, kept in self.call.brought_back if os.path.isfile(kept)
                and self._may_place(self.tree / rel)}

    def _may_place(self, live: Path) -> bool:
        """Nothing is there (a user's, or another replay's), and outside the tree its parent
        is gone too or is a temporary directory: the build's, or this one's."""
        temporary = {os.path.realpath(d) for d in (self.call.env.get("TMPDIR"), tempfile.gettempdir()) if d}
        return not os.path.lexists(live) and (live.is_relative_to(self.tree) or not live.parent.exists()
                                              or os.path.realpath(live.parent) in temporary)

    def _unplaced(self) -> str:
        left = [rel for rel, _ in self.call.brought_back if rel not in self._placed]
        return f" (not put back, a file was there or its parent is not the build's: {', '.join(left)})" if left else ""

    def _put_back(self) -> None:
        for directory in self._made_dirs:
            (self.tree / directory).mkdir(parents=True, exist_ok=True)
        for rel, kept in self._placed.items():
            live = self.tree / rel
            live.parent.mkdir(parents=True, exist_ok=True)
            live.unlink(missing_ok=True)
            shutil.copy2(kept, live)

    def _saved(self, rel: str) -> Path:
        """Where the backup of a file is: outside-the-tree files under their own prefix."""
        return self._backup / OUTSIDE / rel.lstrip("/") if rel.startswith("/") else self._backup / BACKED_UP / rel

    def replay(self, variation: Variation = Variation("plain"), times: int = REPLAYS,
               seen: tuple[str, ...] | None = None) -> ReplayOutcome:
        return self.replay_each([variation], times, seen)[variation.name]

    def replay_each(self, variations: list[Variation], times: int,
                    seen: tuple[str, ...] | None = None) -> dict[str, ReplayOutcome]:
        """Replay every variation `times` times, round-robin, the rounds spread over
        SPREAD_S: one pass over the clock serves every variation. `seen`: a screen, which
        stops replaying a variation once it is decided (`decided`: two outputs differ,
        counting these digests seen before under the same conditions, or a replay failed)."""
        digests: dict[str, list[str]] = {v.name: [] for v in variations}
        contents: dict[str, list[dict[str, str | None]]] = {v.name: [] for v in variations}
        codes: dict[str, list[int | None]] = {v.name: [] for v in variations}
        failures: dict[str, str] = {}
        idle: dict[str, list[bool]] = {v.name: [] for v in variations}
        started = time.monotonic()
        for i in range(times):
            wait = started + SPREAD_S * i / max(times - 1, 1) - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            undecided = [v for v in variations
                         if seen is None or not decided(seen + tuple(digests[v.name]), v.name in failures)]
            if not undecided:
                break
            for variation in undecided:
                code, log, wrote = self._run_once(variation)
                codes[variation.name].append(code)
                files = self._contents()
                contents[variation.name].append(files)
                digests[variation.name].append(outputs_digest(files, files.get))
                idle[variation.name].append(code == self.call.exit_code and not wrote)
                if variation.name not in failures and (code != self.call.exit_code or not wrote):
                    failures[variation.name] = _failure(code, log, idle=code == self.call.exit_code) + self._unplaced()
        return {
            name: ReplayOutcome(tuple(digests[name]), tuple(codes[name]), self.call.exit_code, failures.get(name, ""),
                                tuple(idle[name]), tuple(contents[name]))
            for name in digests
        }

    def _run_once(self, variation: Variation) -> tuple[int | None, Path, bool]:
        """The replay's exit code, its log, and whether it wrote any compared output."""
        self._restore(as_started=True)
        self._put_back()
        argv = list(self.call.argv)
        for wrap in variation.wrappers:
            argv = wrap(argv)
        env = {**self.call.env, **dict(variation.env)}
        self._runs += 1
        log = self.logs / f"{self.call.what}-{self._runs:03d}-{_slug(variation.name)}.log"
        with self.turns, _moved(self.tree, variation.moved):
            before = self._signatures()
            try:
                self.guard.start(argv, cwd=str(self.seen_at / self.call.cwd), env=env,
                                 cpus=variation.cpus or self.cpus, log_path=str(log))
            except OSError as e:  # what the step ran is gone: `python -m build`'s environment was a temp dir
                log.write_text(f"cannot run {argv[0]}: {e.strerror}\n")
                return CANNOT_RUN, log, False
            code = self.guard.wait(max(STEP_TIMEOUT_S, variation.timeout_s)).exit_code
            return code, log, not self.call.compared or self._signatures() != before

    def _signatures(self) -> list[tuple[int, int, int, int] | None]:
        """What tells a compared output rewritten: its inode, size, mtime and ctime (which
        no program can set back), None when absent. A rewrite that keeps all four (`cp -p`
        onto the same inode within one clock tick of the restore) reads as no work: the
        replay is then said to check nothing, never counted as stable."""
        signatures: list[tuple[int, int, int, int] | None] = []
        for rel in sorted(self.call.compared):
            try:
                st = os.lstat(self.tree / rel)
                signatures.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
            except OSError:
                signatures.append(None)
        return signatures

    def _restore(self, as_started: bool = False) -> None:
        """Every file the step wrote or deleted as the reference build left it; `as_started`:
        those it created removed instead, as they were when the step started."""
        created = set(self.call.created) if as_started else set()
        for rel in self.call.restored:
            saved, live = self._saved(rel), self.tree / rel
            if rel in created:
                if live.is_file() or live.is_symlink():
                    live.unlink()
            elif saved.is_file():
                live.parent.mkdir(parents=True, exist_ok=True)
                if live.is_symlink() or live.is_file():
                    live.unlink()
                shutil.copy2(saved, live)
            elif live.is_file() or live.is_symlink():
                live.unlink()

    def _contents(self) -> dict[str, str | None]:
        return {rel: hash_file(str(p)) if (p := self.tree / rel).is_file() else None for rel in self.call.compared}


def decided(digests: tuple[str, ...], failed: bool = False) -> bool:
    """A screen's answer is known: two outputs differ (the step varies), or a replay did
    not run as the traced step did (no evidence either way); more replays change neither."""
    return failed or len(set(digests)) > 1


def joined(outcomes: list[ReplayOutcome]) -> ReplayOutcome:
    """Replays made in turns (or in several slots) under the same conditions, as one outcome."""
    first = outcomes[0]
    return ReplayOutcome(tuple(d for o in outcomes for d in o.digests), tuple(c for o in outcomes for c in o.exit_codes),
                         first.expected_exit, next((o.failure for o in outcomes if o.failure), ""),
                         tuple(i for o in outcomes for i in o.idle), tuple(c for o in outcomes for c in o.contents))


def outputs_digest(compared, digest_of: Callable[[str], str | None]) -> str:
    """One replay's digest of its compared outputs, given each one's content digest (None:
    absent); made the same way from a manifest, it is the traced build's (the step audit)."""
    h = hashlib.sha256()
    for rel in sorted(compared):
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update((digest_of(rel) or "absent").encode() + b"\n")
    return h.hexdigest()


@contextlib.contextmanager
def _moved(tree: Path, moved: MovedMetadata | None):
    """Inputs' mtimes and modes as `moved` says, for one replay; then back as they were."""
    saved = [(tree / p, (tree / p).stat()) for p in moved.paths if (tree / p).is_file()] if moved else []
    try:
        for (path, st), mtime in zip(saved, _mtimes(moved, [st.st_mtime_ns for _, st in saved])):
            if moved and moved.mode_xor:  # `saved` is empty without `moved`
                path.chmod((st.st_mode & 0o7777) ^ moved.mode_xor)
            os.utime(path, ns=(st.st_atime_ns, mtime))
        yield
    finally:
        for path, st in reversed(saved):
            with contextlib.suppress(OSError):
                path.chmod(st.st_mode & 0o7777)
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _mtimes(moved: MovedMetadata | None, mtimes: list[int]) -> list[int]:
    if moved is None or not moved.mtime_reversed:
        return [t + (moved.mtime_shift_ns if moved else 0) for t in mtimes]
    # whole seconds apart, all before the earliest: second-resolution tools see the new order
    order = sorted(range(len(mtimes)), key=lambda i: mtimes[i])
    start = min(mtimes) - len(mtimes) * 10**9
    reversed_times = [0] * len(mtimes)
    for slot, i in enumerate(reversed(order)):
        reversed_times[i] = start + slot * 10**9
    return reversed_times


def _failure(code: int | None, log: Path, idle: bool = False) -> str:
    """`idle`: it exited as traced but wrote none of its outputs (as if it found its work done)."""
    tail = log_tail(log, 50)
    lines = [line for line in tail.splitlines() if line.strip()][:FAILURE_LINES]
    if "\x00" in tail:  # a program printing its product (gzip into a log): bytes, no message to quote
        lines = [f"(binary output, {log.stat().st_size} bytes)"]
    status = "was killed (timeout)" if code is None else f"exited {code}"
    if idle:
        status = f"did no work: replay wrote none of its outputs ({status} as traced, so it checks nothing)"
    return f"{status}: " + (" | ".join(lines) if lines else "(no output)")


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def umask_wrapper(mask: int) -> Wrapper:
    def wrap(argv: list[str]) -> list[str]:
        return ["/bin/sh", "-c", f'umask {mask:03o} && exec "$@"', "sh", *argv]

    return wrap
