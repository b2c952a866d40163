"""Stands in for the fuzzer: one build under a Guard and heavy jitter, until it is killed.

Prints a JSON line every 20 ms while the main thread sits in `Guard.wait`, as the
executor's does: {"processes": [[pid, command, status, sid], ...], "stops": n}.
The tests kill it with SIGKILL, SIGTERM or SIGINT; like the real CLI it turns SIGTERM
into KeyboardInterrupt so `with` blocks unwind.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fuzzer.execute.guard import Guard  # noqa: E402
from fuzzer.execute.jitter import Jitter  # noqa: E402

# four jobs, plus a daemon that double-forks into its own session: `setsid` execs
# `sleep 37` in a child of a subshell that exits at once, orphaning it to the guard
BUILD = "for i in 1 2 3 4; do sleep 30 & done; ( setsid sleep 37 & ); wait"


def describe(process: psutil.Process) -> list | None:
    try:
        return [process.pid, " ".join(process.cmdline()), process.status(), os.getsid(process.pid)]
    except (psutil.Error, OSError):
        return None


def report(guard: Guard, jitter: Jitter) -> None:
    while True:
        seen = [d for d in map(describe, guard.processes()) if d]
        stops = sum(e.action == "stop" for e in jitter.events)
        print(json.dumps({"processes": seen, "stops": stops}), flush=True)
        time.sleep(0.02)


def interrupt(*_) -> None:
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, interrupt)
    with tempfile.TemporaryDirectory() as tmp, Guard() as guard:
        env = {"PATH": os.environ["PATH"]}
        guard.start(["sh", "-c", BUILD], cwd=tmp, env=env, cpus=None, log_path=os.path.join(tmp, "log"))
        with Jitter(1.0, 7, guard.processes) as jitter:
            threading.Thread(target=report, args=(guard, jitter), daemon=True).start()
            guard.wait(None)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
