"""The guard process (`python -m fuzzer.execute.guard_server`): a child subreaper that
runs one build at a time and kills every descendant when the build's root exits, when
asked, and when the fuzzer goes away (stdin's EOF, or its parent's pidfd). The protocol
is described in `fuzzer.execute.guard`, the fuzzer's side."""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import stat
import subprocess
import sys
import time

from fuzzer.execute.procfs import descendants, is_zombie, send_signals

PR_SET_CHILD_SUBREAPER = 36
KILL_PATIENCE = 30.0  # a process stuck in uninterruptible sleep cannot die; don't hang forever
# GNU make 4.4's jobserver is a named pipe, TMPDIR/GMfifoPID, which make removes as it exits:
# a make we SIGKILL leaves it behind. Where make looks for its temporary directory:
MAKE_TMPDIR_VARIABLES = ("MAKE_TMPDIR", "TMPDIR", "TMP", "TEMP")
DEFAULT_TMPDIR = "/tmp"  # where make puts its jobserver pipe when none of those is set


class _Server:
    """The guard process's state: at most one build root, plus everything it spawned."""

    def __init__(self) -> None:
        self.root: subprocess.Popen | None = None
        self.root_code: int | None = None  # set once the root has been reaped
        self.tmpdir = DEFAULT_TMPDIR  # the build's, where a make of it puts its jobserver pipe

    def start(self, request: dict) -> dict:
        own_cpus = os.sched_getaffinity(0)
        try:
            # the guard is single-threaded, so narrowing its own affinity around the spawn
            # is the cheap way to have the build (and all its children) inherit the set
            if request["cpus"] is not None:
                os.sched_setaffinity(0, request["cpus"])
            with open(request["log_path"], "wb") as log:
                self.root = subprocess.Popen(
                    request["argv"], cwd=request["cwd"], env=request["env"], stdin=subprocess.DEVNULL,
                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                )
        except OSError as e:
            return {"error": [e.errno, e.strerror or str(e), e.filename]}
        except (ValueError, TypeError) as e:  # e.g. a NUL byte in argv or env
            return {"error": [0, str(e), None]}
        finally:
            os.sched_setaffinity(0, own_cpus)
        self.root_code = None
        self.tmpdir = next((request["env"][v] for v in MAKE_TMPDIR_VARIABLES if request["env"].get(v)), DEFAULT_TMPDIR)
        return {"pid": self.root.pid}

    def reap(self) -> bool:
        """Collect exited children, noting the root's status; True while any child remains."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if self.root is not None and pid == self.root.pid:
                self.root_code = self.root.returncode = os.waitstatus_to_exitcode(status)

    def kill_all(self) -> int:
        """SIGKILL+SIGCONT every descendant until none is left; how many were alive."""
        alive: set[int] = set()
        deadline = time.monotonic() + KILL_PATIENCE
        while self.reap() and time.monotonic() < deadline:
            living = [pid for pid in descendants(os.getpid()) if not is_zombie(pid)]
            alive.update(living)
            send_signals(living, signal.SIGKILL, signal.SIGCONT)
            time.sleep(0.001)  # let the kernel finish the kills; orphans then reparent to us
        self._remove_jobserver_pipes(alive)
        return len(alive)

    def _remove_jobserver_pipes(self, killed: set[int]) -> None:
        """The named pipes of the makes we killed: only a FIFO named after one of their pids."""
        for pid in killed:
            path = os.path.join(self.tmpdir, f"GMfifo{pid}")
            try:
                if stat.S_ISFIFO(os.lstat(path).st_mode):
                    os.unlink(path)
            except OSError:
                pass

    def finish(self, kill: bool) -> dict | None:
        """Once the root has exited (or at once, with `kill`): clear the tree, say how it ended."""
        self.reap()
        if self.root is None or not (kill or self.root_code is not None):
            return None
        exited_by_itself = self.root_code is not None
        others = self.kill_all()
        self.root = None
        if exited_by_itself:
            return {"exited": self.root_code, "killed": False, "stragglers": others}
        return {"exited": None, "killed": True, "stragglers": 0}


def serve() -> None:
    """The guard process's main loop."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    try:
        parent = os.pidfd_open(os.getppid())  # readable once the fuzzer exits, even if stdin leaked
    except OSError:  # Linux < 5.3: stdin's EOF alone tells
        parent = None
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        # a Python handler (not SIG_IGN, which builds would inherit); the work happens in the loop
        signal.signal(sig, lambda *_: None)
    selector = selectors.PollSelector()  # unlike epoll, takes any fd (stdin may be a file)
    for fd in (sys.stdin.fileno(), wake_r, parent):
        if fd is not None:
            selector.register(fd, selectors.EVENT_READ)
    server, buffer, out = _Server(), b"", sys.stdout.buffer

    def send(message: dict | None) -> None:
        if message is not None:
            out.write(json.dumps(message).encode() + b"\n")
            out.flush()

    try:
        while True:
            for key, _ in selector.select():
                if key.fd == parent:
                    return
                if key.fd == wake_r:
                    signals = os.read(wake_r, 65536)
                    if {signal.SIGINT, signal.SIGTERM, signal.SIGHUP} & set(signals):
                        return
                    continue
                data = os.read(key.fd, 65536)
                if not data:
                    return
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    request = json.loads(line)
                    if request["op"] == "start":
                        send({"reply": "start", **server.start(request)})
                    else:
                        send(server.finish(kill=True))
                        send({"reply": "kill"})
            send(server.finish(kill=False))
    except BrokenPipeError:
        pass  # the fuzzer is gone; fall through to the cleanup
    finally:
        server.kill_all()


if __name__ == "__main__":
    serve()
