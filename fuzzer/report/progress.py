"""Live progress of a campaign: one plain line per run (logs, CI), or a bar with an ETA
on a terminal, or nothing but the summary with --quiet.

In a log, a long build or localization would print nothing for minutes: some CI systems
kill a job silent for 10 minutes (CircleCI's default), and people take a silent job for
a hung one. So, used as a context manager, it writes a heartbeat line (phase, run, elapsed)
whenever nothing was written for HEARTBEAT_S."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from fuzzer.execute.run import RunRecord
from fuzzer.escaping import safe_name


HEARTBEAT_S = 25.0  # under the 30 s promised in the README, whatever the thread's wake-up delay


class ConsoleEvents:
    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False, bar: bool | None = None,
                 planned: int = 0, heartbeat_s: float = HEARTBEAT_S, clock=time.monotonic):
        self.stream = stream
        self.quiet = quiet
        self.bar = stream.isatty() if bar is None else bar
        self.clock = clock
        self.started_at = self.last_line = clock()
        self.walls: list[float] = []
        self.heartbeat_s = heartbeat_s
        self.phase_name = "starting"
        self.next_run, self.planned = 0, planned
        self._lock = threading.Lock()  # the heartbeat thread writes too
        self._stopped = threading.Event()
        self._beating: threading.Thread | None = None

    def __enter__(self) -> "ConsoleEvents":
        if not self.bar and not self.quiet:  # a terminal has its bar; --quiet means quiet
            self._beating = threading.Thread(target=self._beat, name="buildfuzz-heartbeat", daemon=True)
            self._beating.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stopped.set()
        if self._beating is not None:
            self._beating.join()

    def _write(self, text: str) -> None:
        if not self.quiet:
            with self._lock:
                self.stream.write(text)
                self.stream.flush()
                self.last_line = self.clock()

    def started(self, campaign: int, seed: int, workspace: Path, resumed: int) -> None:
        self.next_run = resumed
        again = f", resuming after {resumed} runs" if resumed else ""
        self._write(f"campaign {campaign} (seed {seed}{again}); builds run in {safe_name(str(workspace))}\n")

    def run_finished(self, record: RunRecord, group: str | None, planned: int) -> None:
        self.walls.append(record.wall_s)
        self.next_run, self.planned = record.index + 1, planned
        outcome = f"group {group}" if group else record.status.value.upper()
        width = len(str(planned))
        line = (
            f"run {record.index:>{width}}/{planned}  {record.perturbation.describe():<44} "
            f"exit {record.exit_code if record.exit_code is not None else '-':>3}  {record.wall_s:7.2f}s  {outcome}"
            + ("  (reference)" if record.index == 0 else "")
        )
        if self.bar:
            self._write("\r\033[K" + line + "\n" + self._bar(record.index + 1, planned))
        else:
            self._write(line + "\n")

    def phase(self, name: str) -> None:
        self.phase_name = name
        self._write(("\r\033[K" if self.bar else "") + f"-- {name}\n")

    def heartbeat(self) -> None:
        """One line saying what runs, if nothing was written for `heartbeat_s`."""
        now = self.clock()
        if now - self.last_line < self.heartbeat_s:
            return
        doing = f"run {self.next_run}/{self.planned or '?'} building" if self.phase_name == "explore" else "working"
        self._write(f"-- {self.phase_name}: {doing}, {_duration(now - self.started_at)} elapsed\n")

    def _beat(self) -> None:
        while not self._stopped.wait(max(0.0, self.last_line + self.heartbeat_s - self.clock())):
            self.heartbeat()

    def _bar(self, done: int, planned: int, width: int = 30) -> str:
        filled = int(width * done / max(planned, 1))
        mean = sum(self.walls) / len(self.walls)
        eta = mean * max(planned - done, 0)
        return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{planned}  ETA {eta:5.0f}s"


def _duration(seconds: float) -> str:
    """1h02m, 12m30s, 45s: what a person reads in a log."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
