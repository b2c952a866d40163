"""guard: whatever ends a build, every process of it is resumed and killed.

Each executor owns one guard *process* (`python -m fuzzer.execute.guard_server`). The
guard is a child subreaper, so build processes that double-fork or setsid away still
reparent to it and stay findable: "the build" is simply every descendant of the guard.
It kills that tree when the build's root exits (stragglers), when asked (timeout, interrupt), and when
its stdin reaches EOF or its parent exits — which is how it learns the fuzzer died, even
by SIGKILL. Killing means SIGKILL then SIGCONT to every descendant until none is left, so
a process stopped by the jitter engine never survives in the stopped state.

The fuzzer side covers the two ways the guard alone cannot:
- the guard itself is killed (SIGKILL): its orphans reparent past it, so `Guard` sweeps
  what it can still find of the build — the processes it last saw, every member of the
  sessions the build ran in (a setsid'd daemon leads its own), and their descendants —
  and raises `GuardError`;
- the build stops itself (`kill -STOP $$`): nobody would ever resume it, so `wait` notices
  a tree frozen with a process stopped by someone other than the jitter engine, resumes
  it once, and ends the build if it freezes again (`FreezeWatch`).

Protocol, one JSON object per line. Fuzzer → guard: `{"op": "start", argv, cwd, env,
cpus, log_path}` and `{"op": "kill"}`; the guard answers each with `{"reply": op, ...}`.
Once per build, when the root has exited and no descendant is left, the guard sends
`{"exited": code, "killed": bool, "stragglers": n}` (it precedes the reply to a kill).
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, overload

import psutil

from fuzzer.execute.procfs import descendants, members, process_table, send_signals, stat_fields

CLOSE_PATIENCE = 10.0
SWEEP_PATIENCE = 5.0  # the fuzzer's own kill loop, once the guard is gone
WATCH_TICK = 0.25  # how often wait() looks at the tree (self-stop check, processes last seen)
FREEZE_S = 2.0  # a tree frozen this long around a process stopped outside the jitter engine is stuck
STOPPED_STATES = ("T", "t")  # stopped, and stopped under ptrace (strace's tracees)
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class GuardError(RuntimeError):
    """The guard process is gone or misbehaved; the build may not have been cleaned up."""


@dataclass(frozen=True)
class BuildExit:
    exit_code: int | None  # -N when the build died of signal N; None when we killed it
    timed_out: bool
    stragglers: int  # processes still alive after the root exited (daemons), killed by the guard
    note: str = ""  # what the guard had to do besides waiting (a self-stopped build), for the log


class Guard:
    """Runs builds, one at a time, under a guard process. A context manager."""

    def __init__(self, inside: Callable[[list[str], dict[str, str]], list[str]] | None = None) -> None:
        """`inside(argv, env)`: the argv that runs the guard process where its builds are to
        run (a replay slot's mount namespace): it must exec `argv`, keeping its pid."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
        argv = [sys.executable, "-m", "fuzzer.execute.guard_server"]
        # own session: a Ctrl-C on the terminal reaches the fuzzer, which decides what to kill
        self._proc = subprocess.Popen(
            inside(argv, env) if inside else argv,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None  # both are pipes
        self._to_guard, self._from_guard = self._proc.stdin, self._proc.stdout
        self._buffer = b""
        self._active = False  # a build may be running: from start() until wait() or kill() ends it
        self._root: int | None = None
        self._exit: dict | None = None  # the guard's "exited" message, not yet returned
        self._known: dict[int, psutil.Process] = {}
        self._sessions: set[int] = set()  # every session the current build's processes were seen in
        self._closed = False

    @property
    def alive(self) -> bool:
        """False once the guard process is gone (or closed): this Guard can run nothing more."""
        return not self._closed and self._proc.poll() is None

    def __enter__(self) -> "Guard":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, argv: list[str], *, cwd: str, env: dict[str, str], cpus: tuple[int, ...] | None, log_path: str) -> int:
        """Start a build in its own session; stdout and stderr go to `log_path`."""
        if self._closed:
            raise GuardError("guard is closed")
        if self._active:
            raise RuntimeError("a build is already running under this guard")
        self._active, self._root, self._exit = True, None, None  # set first: an interrupt may land mid-request
        reply = self._request({
            "op": "start", "argv": list(argv), "cwd": cwd, "env": env,
            "cpus": None if cpus is None else list(cpus), "log_path": log_path,
        })
        if "error" in reply:
            self._active = False
            errno, message, filename = reply["error"]
            raise OSError(errno, message, filename) if errno else ValueError(message)
        self._root = reply["pid"]
        self._sessions = {self._root}  # the root leads its own session
        return self._root

    def wait(self, timeout: float | None, jitter_stopped: Callable[[], frozenset[int]] = frozenset) -> BuildExit:
        """Wait for the build's root to exit. Kill the whole tree on timeout, or when the
        build stopped itself again after one resume; `jitter_stopped` gives the pids the
        jitter engine holds stopped, which are not the build's doing."""
        if not self._active:
            raise RuntimeError("no build is running")
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        freeze = FreezeWatch()
        while self._exit is None:
            message = self._receive(min(deadline, time.monotonic() + WATCH_TICK))
            if message is not None:
                self._take(message)
            elif self._must_end(deadline, freeze, jitter_stopped()):
                self._request({"op": "kill"})  # the exited message arrives before the reply
                if self._exit is None:
                    raise GuardError("the guard reported no exit for the killed build")
        exited, self._exit, self._active = self._exit, None, False
        timed_out = exited["killed"] and not freeze.ended
        note = f"still running after the timeout of {timeout:g} s: killed" if timed_out else freeze.note
        return BuildExit(exited["exited"], timed_out, exited["stragglers"], note)

    def _must_end(self, deadline: float, freeze: "FreezeWatch", jitter_stopped: frozenset[int]) -> bool:
        """One look at the build between messages: past the deadline, or stuck for good?"""
        now = time.monotonic()
        if now >= deadline:
            return True
        action = freeze.look(now, self._look(), jitter_stopped)
        if action == FreezeWatch.RESUME:
            send_signals(freeze.stopped, signal.SIGCONT)
        return action == FreezeWatch.END

    def _look(self) -> dict[int, "_Sample"]:
        """The build's processes now, sampled (which also updates what `_sweep` knows)."""
        samples = {process.pid: _Sample.of(process.pid) for process in self.processes()}
        return {pid: sample for pid, sample in samples.items() if sample is not None}

    def processes(self) -> list[psutil.Process]:
        """Every process of the current build (zombies not yet reaped included); [] when idle.

        Thread-safe; the jitter engine calls it every few ms, so Process objects are kept
        for pids seen in the previous call (a pid cannot be reused between two calls while
        it keeps appearing in the tree).
        """
        if not self._active or self._closed:
            return []
        known: dict[int, psutil.Process] = {}
        previous = self._known
        for pid in descendants(self._proc.pid):
            try:
                known[pid] = previous.get(pid) or self._first_sight(pid)
            except (psutil.Error, OSError):
                pass
        self._known = known
        return list(known.values())

    def _first_sight(self, pid: int) -> psutil.Process:
        process = psutil.Process(pid)
        self._sessions.add(os.getsid(pid))  # for _sweep: a daemon's children may outlive it
        return process

    def kill(self) -> None:
        """Resume and kill every process of the current build; returns when all are gone."""
        if self._closed or not self._active:
            return
        try:
            self._request({"op": "kill"})
        finally:
            self._active, self._exit = False, None

    def interrupt(self) -> None:
        """From any thread, even while another waits on this guard: the guard process kills the
        build and exits, as on SIGTERM (that wait then ends in GuardError); close() still follows."""
        if not self._closed:
            self._proc.send_signal(signal.SIGTERM)

    def close(self) -> None:
        """Kill any build and stop the guard. Idempotent; never raises GuardError."""
        if self._closed:
            return
        self._closed = True
        try:
            self._to_guard.close()  # EOF: the guard kills the tree and exits
        except OSError:
            pass
        try:
            self._proc.wait(CLOSE_PATIENCE)
        except subprocess.TimeoutExpired:
            self._sweep()
            self._proc.kill()
            self._proc.wait()
        self._from_guard.close()
        self._active, self._exit = False, None

    # -- protocol

    def _request(self, message: dict) -> dict:
        try:
            self._to_guard.write(json.dumps(message).encode() + b"\n")
            self._to_guard.flush()
        except (OSError, ValueError):
            raise self._lost() from None
        while (reply := self._receive(None)).get("reply") != message["op"]:
            self._take(reply)
        return reply

    def _take(self, message: dict) -> None:
        if "exited" in message:
            self._exit = message

    @overload
    def _receive(self, deadline: None) -> dict: ...  # no deadline: it waits for the next message

    @overload
    def _receive(self, deadline: float) -> dict | None: ...

    def _receive(self, deadline: float | None) -> dict | None:
        """The next message, or None once `deadline` (monotonic) has passed."""
        fd = self._from_guard.fileno()
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([fd], [], [], left)[0]:
                return None
            data = os.read(fd, 65536)
            if not data:
                raise self._lost()
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def _lost(self) -> GuardError:
        """The guard is gone (or broke its pipe): kill what it left, and say so."""
        self._active, self._exit = False, None  # first: the jitter engine then sees no build
        how = _how_it_ended(self._proc)
        killed = self._sweep()
        return GuardError(f"the guard process died ({how}); buildfuzz killed the {killed} build process(es) it left")

    def _sweep(self) -> int:
        """Without the guard, kill every build process still findable, until a pass finds
        none alive: the ones last seen, the members of the build's sessions, and their
        descendants. Only a process that escaped into a new session and lost its parent
        since the tree was last listed (every few ms under jitter, else WATCH_TICK) can be
        missed. Returns how many."""
        killed: set[int] = set()
        deadline = time.monotonic() + SWEEP_PATIENCE
        while time.monotonic() < deadline:
            seen = {pid for pid, process in list(self._known.items()) if process.is_running()}
            alive = members(process_table(), seen, self._sessions)
            if not alive:
                break
            send_signals(alive, signal.SIGKILL, signal.SIGCONT)
            killed |= alive
            time.sleep(0.001)
        return len(killed)


def _how_it_ended(proc: subprocess.Popen) -> str:
    try:
        code = proc.wait(CLOSE_PATIENCE)
    except subprocess.TimeoutExpired:
        proc.kill()  # alive but deaf: of no use any more
        return "it stopped answering"
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


@dataclass(frozen=True)
class _Sample:
    """One look at one process."""

    state: str
    activity: tuple[int, int]  # (start time, CPU ticks): changes when it runs, or its pid is reused

    @classmethod
    def of(cls, pid: int) -> "_Sample | None":
        fields = stat_fields(pid)
        if len(fields) < 20:
            return None
        return cls(fields[0].decode(), (int(fields[19]), int(fields[11]) + int(fields[12])))


class FreezeWatch:
    """Notices a build that stopped itself, from samples of its tree taken now and then.

    Frozen: some process is stopped (not by the jitter engine) and nothing in the tree ran
    — no CPU time used, no process started or ended — for FREEZE_S. A build tool waiting
    on a stopped job uses no CPU, so this catches `kill -STOP $$` in one recipe of a
    parallel make too, while a build that makes progress elsewhere is left alone. The first
    freeze asks for a resume (SIGCONT to `stopped`), the second for the end of the build.
    """

    RESUME, END = "resume", "end"

    def __init__(self) -> None:
        self.stopped: list[int] = []  # the stopped pids, when a freeze was found
        self.resumed = False
        self.ended = False
        self._activity: dict[int, tuple[int, int]] | None = None  # as of the last change
        self._since = 0.0  # monotonic time of the last change

    @property
    def note(self) -> str:
        if self.ended:
            return "build stopped itself (SIGSTOP); resumed once, stopped again: ended"
        if self.resumed:
            return f"build stopped itself (SIGSTOP) and nothing ran for {FREEZE_S:g} s: resumed once"
        return ""

    def look(self, now: float, samples: dict[int, _Sample], jitter_stopped: frozenset[int]) -> str | None:
        """RESUME or END when the build is frozen for the first or second time, else None."""
        activity = {pid: sample.activity for pid, sample in samples.items()}
        stopped = [pid for pid, s in samples.items() if s.state in STOPPED_STATES and pid not in jitter_stopped]
        if not stopped or activity != self._activity:
            self._activity, self._since = activity, now
            return None
        if now - self._since < FREEZE_S:
            return None
        self.stopped, self._activity = stopped, None
        if self.resumed:
            self.ended = True
            return self.END
        self.resumed = True
        return self.RESUME
