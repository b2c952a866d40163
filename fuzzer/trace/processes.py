"""Process tree and file accesses from a stream of parsed strace records.

Every process gets its exec chain, its working directory at its first exec (a fork that
changes directory before it execs, as `subprocess.run(cwd=...)` does, runs its program
there), its lifetime, exit status and the files it touched (the kinds of access are in
`fuzzer.trace.process_model`, paths named as `fuzzer.trace.paths` names them). Threads
are folded into their process (their children are the process's children), so a
multithreaded driver still owns the jobs it spawns.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable

from fuzzer.trace.effects import EFFECTS, NO_EFFECT, Effect, failure_probe, pointer_blind
from fuzzer.trace.process_model import Access, Process, LiveProcess
from fuzzer.trace.parse import Call, Exit, Record, Syscall, call_parts, decode_array, decode_string, fd_path
from fuzzer.trace.parse import is_truncated
from fuzzer.trace.parse import CACHED_CALL_CHARS, CALL_CACHE_SIZE
from fuzzer.trace.paths import UNKNOWN_CWD, PathNames

ENV_CACHE_LIMIT = 256
F_DUPFD = frozenset({"F_DUPFD", "F_DUPFD_CLOEXEC"})
CLONE_FLAG = re.compile(r"\bCLONE_[A-Z_]+")
UNREAD = object()


class ProcessTracker:
    """Feed records in file order, then `finish()`.

    A child's first lines often precede its parent's `clone(...) = pid` line; those are
    buffered until the parent names the child, so cwd and parent are known when replayed.
    """

    def __init__(self, workspace: str, parent: bool = False):
        self.paths = PathNames(workspace, parent)
        self.workspace = self.paths.workspace
        self._relative = self.paths.relative
        self.procs: list[LiveProcess] = []
        self.frozen: dict[int, Process] = {}  # index → the process, frozen when it exited
        self.live: dict[int, LiveProcess] = {}
        self.thread_leader: dict[int, int] = {}
        self.orphans: dict[int, list[Record]] = {}
        # most processes share one environment, passed in the same words: keep it, and decode it, once
        self.envs: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._environment = functools.lru_cache(ENV_CACHE_LIMIT)(
            lambda arg: self.envs.setdefault(env := tuple(map(self.paths.unmoved, decode_array(arg))), env))
        self._cached_call_effect = functools.lru_cache(CALL_CACHE_SIZE)(self._call_effect)
        self._blind: dict[str, tuple | None] = {}  # `pointer_blind` text → what the call means

    def feed(self, record: Record) -> None:
        pid = self.thread_leader.get(record.pid, record.pid)
        proc = self.live.get(pid)
        if proc is None:
            if self.procs:
                self.orphans.setdefault(record.pid, []).append(record)
                return
            proc = self._new(pid, None, (), self.workspace, record.time)
        if record.time > proc.end:
            proc.end = record.time
        if isinstance(record, Exit):
            self._exit(proc, record)
        else:
            handler = HANDLERS.get(record.name)
            if handler is not None:
                handler(self, proc, record)

    def feed_calls(self, items: Iterable[Call | Exit]) -> None:
        """`feed` for `parse.calls`: what a call means apart from the process making it (most
        opens and probes) is worked out once per distinct text and applied here; the rest go
        to `feed` as records."""
        live, leader, make = self.live, self.thread_leader, tuple.__new__
        for item in items:
            if type(item) is not tuple:
                self.feed(item)
                continue
            pid, time, call = item
            known = self._cached_call_effect(call) if len(call) <= CACHED_CALL_CHARS else self._call_effect(call)
            if known is None:
                continue
            name, effect, parts = known
            proc = live.get(leader.get(pid, pid))
            if effect is None or proc is None:
                self.feed(make(Syscall, (pid, time, name, *parts)))
                continue
            if time > proc.end:
                proc.end = time
            self._apply(proc, effect, time)

    def _call_effect(self, call: str) -> tuple[str, Effect | None, tuple] | None:
        """(the call's name; its effect on any process making it, None if its handler must
        see the process; its parts), or None if the text is damaged."""
        name, _, text = call.partition("(")
        blind = pointer_blind(name, text)
        if blind is None:
            return self._read_call(name, text)
        known = self._blind.get(blind, UNREAD)
        if known is UNREAD:
            if len(self._blind) >= CALL_CACHE_SIZE:
                del self._blind[next(iter(self._blind))]
            known = self._blind[blind] = self._read_call(name, text)
        if known is not None and known[1] is None:  # its handler is given this call's own parts
            return self._read_call(name, text)
        return known

    def _read_call(self, name: str, text: str) -> tuple[str, Effect | None, tuple] | None:
        parts = call_parts(text, cached=False)
        if parts is None:
            return None
        effect_of = EFFECTS.get(name)
        if effect_of is None:
            return name, (None if name in HANDLERS else NO_EFFECT), parts
        return name, effect_of(self.paths, UNKNOWN_CWD, Syscall(0, 0.0, name, *parts)), parts

    def finish(self) -> list[Process]:
        """Replay children whose parent never named them, then freeze."""
        while self.orphans:
            pid, records = self.orphans.popitem()
            self.thread_leader.pop(pid, None)
            self._new(pid, None, (), None, records[0].time)
            for record in records:
                self.feed(record)
        return [self.frozen.get(proc.index) or self._freeze(proc) for proc in self.procs]

    def _new(self, pid: int, parent: LiveProcess | None, argv: tuple[str, ...], cwd: str | None, start: float,
             shared: frozenset[str] = frozenset()) -> LiveProcess:
        proc = LiveProcess(len(self.procs), pid, parent.index if parent else None, argv, [cwd], start, cwd, start)
        if parent is not None:  # a child inherits its parent's stdin; CLONE_FS/CLONE_FILES share, not copy
            proc.fs = parent.fs if "CLONE_FS" in shared else proc.fs
            proc.fds = parent.fds if "CLONE_FILES" in shared else [parent.stdin_pipe]
        self.procs.append(proc)
        self.live[pid] = proc
        return proc

    def _exit(self, proc: LiveProcess, record: Exit) -> None:
        if record.pid != proc.pid:
            self.thread_leader.pop(record.pid, None)
            return
        proc.exit_code, proc.signal = record.code, record.signal
        del self.live[proc.pid]
        # nothing changes an exited process: freeze it now, and its working set goes
        self.frozen[proc.index] = self._freeze(proc)
        proc.accesses.clear()

    def _freeze(self, proc: LiveProcess) -> Process:
        code = proc.exit_code if proc.exit_code is not None or proc.signal else proc.exit_group_code
        make = tuple.__new__
        return Process(
            index=proc.index,
            pid=proc.pid,
            parent=proc.parent,
            argv=proc.argv,
            execs=tuple(proc.execs),
            cwd=self._cwd_name(proc.exec_cwd if proc.execs and proc.exec_cwd else proc.start_cwd),
            start=proc.start,
            end=proc.end,
            exit_code=code,
            signal=proc.signal,
            accesses=tuple(
                make(Access, (kind, path, first, last, found, origin))  # as parse makes records
                for (kind, path, found), (first, last, origin) in proc.accesses.items()
            ),
            ppid=self.procs[proc.parent].pid if proc.parent is not None else None,
            env=proc.env,
            stdin_pipe=proc.stdin_pipe,
            network=proc.network,
        )

    # --- paths -------------------------------------------------------------------------

    def _cwd_name(self, cwd: str | None) -> str:
        """Workspace-relative, absolute outside it (a pip hook's /tmp/build-via-sdist-*)."""
        return (self._relative(cwd) or cwd) if cwd else "."

    def _path(self, proc: LiveProcess, path_arg: str, dirfd_arg: str | None = None) -> str | None:
        at_cwd, base, path = self.paths.locate(proc.cwd, path_arg, dirfd_arg)
        if at_cwd:
            self._moved(proc, base)
        return path

    @staticmethod
    def _moved(proc: LiveProcess, base: str | None) -> None:
        """An `AT_FDCWD</dir>` annotation: strace shows the live cwd, trust it over our tracking."""
        proc.cwd = base or proc.cwd
        proc.start_cwd = proc.start_cwd or proc.cwd
        if proc.execs and proc.exec_cwd is None:  # a process whose start strace showed late
            proc.exec_cwd = proc.cwd

    # --- recording -----------------------------------------------------------------------

    def _record(
        self, proc: LiveProcess, kind: str, path: str | None, time: float, found: bool = True, origin: str | None = None
    ) -> None:
        if path is None:
            return
        key = (kind, path, found)
        seen = proc.accesses.get(key)
        if seen is None:
            proc.accesses[key] = [time, time, origin]
        elif time > seen[1]:
            seen[1] = time
            seen[2] = origin or seen[2]

    def _probe_failure(self, proc: LiveProcess, call: Syscall, path: str | None) -> None:
        for kind, name, found in failure_probe(call.errno, path):
            self._record(proc, kind, name, call.time, found)

    def _apply(self, proc: LiveProcess, effect: Effect, time: float) -> None:
        at_cwd, base, accesses = effect
        if at_cwd:
            self._moved(proc, base)
        for kind, path, found in accesses:
            self._record(proc, kind, path, time, found)

    # --- syscalls ------------------------------------------------------------------------

    def on_effect(self, proc: LiveProcess, call: Syscall) -> None:
        self._apply(proc, EFFECTS[call.name](self.paths, proc.cwd, call), call.time)

    def on_execve(self, proc: LiveProcess, call: Syscall, at: bool = False) -> None:
        args = call.args[1:] if at else call.args
        if len(args) < 2:
            return
        path = self._path(proc, args[0], call.args[0] if at else None)
        if not call.ok:
            self._probe_failure(proc, call, path)
            return
        proc.argv = tuple(map(self.paths.unmoved, decode_array(args[1])))
        if not proc.execs:
            proc.exec_cwd = proc.cwd
        proc.execs.append(proc.argv)
        if proc.env is None and len(args) >= 3 and args[2].startswith("["):
            proc.env = self._environment(args[2])
        self._record(proc, "read", path, call.time)

    def on_execveat(self, proc: LiveProcess, call: Syscall) -> None:
        self.on_execve(proc, call, at=True)

    def _move(self, proc: LiveProcess, call: Syscall, old: str | None, new: str | None, keep_old: bool) -> None:
        if keep_old and new is None:  # a link into a dropped place (buildfuzz's keep) reads nothing
            return
        if not call.ok:
            self._probe_failure(proc, call, old)
            return
        # link: the new name shares the old file's content
        self._record(proc, "read" if keep_old else "delete", old, call.time)
        self._record(proc, "write", new, call.time, origin=old)

    def on_rename(self, proc: LiveProcess, call: Syscall) -> None:
        if len(call.args) >= 2:
            a = call.args
            self._move(proc, call, self._path(proc, a[0]), self._path(proc, a[1]), call.name == "link")

    def on_renameat(self, proc: LiveProcess, call: Syscall) -> None:
        if len(call.args) >= 4:
            a = call.args
            old, new = self._path(proc, a[1], a[0]), self._path(proc, a[3], a[2])
            if len(a) > 4 and "RENAME_EXCHANGE" in a[4]:
                self._record(proc, "write", old, call.time)
            self._move(proc, call, old, new, call.name == "linkat")

    def on_symlink(self, proc: LiveProcess, call: Syscall) -> None:
        """symlink(target, path) or symlinkat(target, dirfd, path); the target is just text."""
        if len(call.args) >= 2:
            dirfd = call.args[1] if len(call.args) == 3 else None
            self._change(proc, call, "write", self._path(proc, call.args[-1], dirfd))

    def _change(self, proc: LiveProcess, call: Syscall, kind: str, path: str | None) -> None:
        if call.ok:
            self._record(proc, kind, path, call.time)
        else:
            self._probe_failure(proc, call, path)

    def _target(self, proc: LiveProcess, call: Syscall) -> str | None:
        """The path of `name(path, ...)` or of its `nameat(dirfd, path, ...)` form."""
        if call.name.endswith("at"):
            return self._path(proc, call.args[1], call.args[0]) if len(call.args) >= 2 else None
        return self._path(proc, call.args[0]) if call.args else None

    def on_delete(self, proc: LiveProcess, call: Syscall) -> None:
        self._change(proc, call, "delete", self._target(proc, call))

    def on_mkdir(self, proc: LiveProcess, call: Syscall) -> None:
        self._change(proc, call, "mkdir", self._target(proc, call))

    def on_chdir(self, proc: LiveProcess, call: Syscall) -> None:
        if not (call.ok and call.args) or is_truncated(call.args[0]):
            return
        path = decode_string(call.args[0])
        if path and (path.startswith("/") or proc.cwd):
            proc.cwd = os.path.normpath(os.path.join(proc.cwd or "/", path))

    def on_fchdir(self, proc: LiveProcess, call: Syscall) -> None:
        path = fd_path(call.args[0]) if call.args else None
        if call.ok and path:
            proc.cwd = path

    def on_copy(self, proc: LiveProcess, call: Syscall) -> None:
        """copy_file_range(in, off, out, off, ...) or sendfile(out, in, ...): `cp` and
        Python's shutil copy this way, so the copy's bytes are the source's. Only when
        this process opened the target itself: into a descriptor it inherited (`(cat a;
        echo b) > out`, whose cat copies) the bytes are a part of what its opener writes."""
        if len(call.args) < 3 or not call.ok:
            return
        source, target = (call.args[0], call.args[2]) if call.name == "copy_file_range" else call.args[1::-1]
        source_path, target_path = fd_path(source), fd_path(target)
        if source_path is None or target_path is None:  # a socket or a pipe: no file's bytes
            return
        old, new = self._relative(source_path), self._relative(target_path)
        self._record(proc, "read", old, call.time)
        if ("write", new, True) in proc.accesses:
            self._record(proc, "write", new, call.time, origin=old)

    def on_dup(self, proc: LiveProcess, call: Syscall) -> None:
        """dup, dup2, dup3 or fcntl(F_DUPFD*) onto fd 0: whether standard input is now a pipe
        (`gen | sort`; `tar czf` gives its gzip the pipe by a plain dup). Not the pipe GNU
        make gives every parallel job but one, in the job's fork before its exec: make closed
        its writing end, so it reads as empty, as a replay's /dev/null does. Onto fd 1 or 2
        before the process's first exec: the file its program is started writing into (tar's
        fork dups the .tar.gz it opened, then runs gzip), which its replay alone would not."""
        duplicates = not call.name.startswith("fcntl") or (len(call.args) > 1 and call.args[1] in F_DUPFD)
        if not (call.ok and call.args and duplicates):
            return
        if call.result == 0:
            piped = call.args[0].partition("<")[2].startswith(("pipe:", "socket:"))
            proc.stdin_pipe = piped and not proc.a_fork_of_make
        elif call.result in (1, 2) and not proc.execs:
            path = fd_path(call.args[0])
            self._record(proc, "stdout", self._relative(path) if path else None, call.time)

    def on_connect(self, proc: LiveProcess, call: Syscall) -> None:
        if len(call.args) >= 2 and proc.network is None and (call.ok or call.errno == "EINPROGRESS"):
            address = call.args[1]
            if "sa_family=AF_INET" in address:  # AF_INET and AF_INET6; AF_UNIX is local (nscd)
                proc.network = address.strip("{}")

    def on_clone(self, proc: LiveProcess, call: Syscall) -> None:
        if not call.ok or call.result == 0:
            return
        child = call.result
        flags = frozenset(CLONE_FLAG.findall(" ".join(call.args)))
        if "CLONE_THREAD" in flags:  # a thread's chdir is its process's (CLONE_FS, as pthreads clone)
            self.thread_leader[child] = proc.pid
        else:
            self.thread_leader.pop(child, None)  # a dead thread's id, reused
            self._new(child, proc, proc.argv, proc.cwd, call.time, flags)
        for record in self.orphans.pop(child, ()):
            self.feed(record)

    def on_exit_group(self, proc: LiveProcess, call: Syscall) -> None:
        if call.args and call.args[0].lstrip("-").isdigit():
            proc.exit_group_code = int(call.args[0])


HANDLERS = {
    **dict.fromkeys(EFFECTS, ProcessTracker.on_effect),
    "execve": ProcessTracker.on_execve,
    "execveat": ProcessTracker.on_execveat,
    **dict.fromkeys(("mkdir", "mkdirat"), ProcessTracker.on_mkdir),
    "chdir": ProcessTracker.on_chdir,
    "fchdir": ProcessTracker.on_fchdir,
    "exit_group": ProcessTracker.on_exit_group,
    **dict.fromkeys(("rename", "link"), ProcessTracker.on_rename),
    **dict.fromkeys(("renameat", "renameat2", "linkat"), ProcessTracker.on_renameat),
    **dict.fromkeys(("symlink", "symlinkat"), ProcessTracker.on_symlink),
    **dict.fromkeys(("unlink", "unlinkat", "rmdir"), ProcessTracker.on_delete),
    **dict.fromkeys(("clone", "clone3", "fork", "vfork"), ProcessTracker.on_clone),
    **dict.fromkeys(("copy_file_range", "sendfile", "sendfile64"), ProcessTracker.on_copy),
    **dict.fromkeys(("dup", "dup2", "dup3", "fcntl", "fcntl64"), ProcessTracker.on_dup),
    "connect": ProcessTracker.on_connect,
}


def track_processes(records: Iterable[Record], workspace: str, parent: bool = False) -> list[Process]:
    tracker = ProcessTracker(workspace, parent)
    for record in records:
        tracker.feed(record)
    return tracker.finish()


def track_calls(items: Iterable[Call | Exit], workspace: str, parent: bool = False) -> list[Process]:
    """`track_processes` of the records `items` make (`parse.calls`), read faster."""
    tracker = ProcessTracker(workspace, parent)
    tracker.feed_calls(items)
    return tracker.finish()
