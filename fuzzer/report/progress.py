"""Live progress of a campaign: one plain line per run (logs, CI), or click's progress bar
with an ETA under the lines on a terminal, or nothing but the summary with --quiet.

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

import click

from fuzzer.execute.run import RunRecord
from fuzzer.escaping import safe_name


HEARTBEAT_S = 25.0  # under the 30 s promised in the README, whatever the thread's wake-up delay
CLEAR_BAR = "\r\033[K\033[?25h"  # a line written over click's bar: the bar goes, the cursor it hid comes back


class ConsoleEvents:
    def __init__(self, stream: TextIO | None = None, quiet: bool = False, bar: bool | None = None,
                 planned: int = 0, heartbeat_s: float = HEARTBEAT_S, clock=time.monotonic,
                 budget_s: float | None = None, parallel: int = 1):
        self.stream = sys.stderr if stream is None else stream  # the one at the call, not at the import
        self.quiet = quiet
        self.bar = self.stream.isatty() if bar is None else bar
        self.clock = clock
        self.started_at = self.last_line = self.phase_started_at = clock()
        self.budget_s, self.parallel = budget_s, parallel  # the ETA never runs past the budget
        self.walls: list[float] = []
        self.heartbeat_s = heartbeat_s
        self.phase_name = "starting"
        self.next_run, self.planned = 0, planned
        self.done = 0  # runs finished, those a resumed campaign had made included
        self._progress = None  # click's bar on a terminal, from the first run on
        self._bar_on_screen = False  # the bar is the last line written: the cursor is hidden
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
        if self._bar_on_screen:
            with self._lock:
                self._progress.render_finish()  # ends the bar's line; the cursor it hid comes back

    def _write(self, text: str, done: int | None = None) -> None:
        """`text`, then on a terminal the bar at `done` runs (None: no bar this time)."""
        if not self.quiet:
            with self._lock:
                self.stream.write(text)
                self.stream.flush()
                if done is not None:
                    self._draw_bar(done)
                self.last_line = self.clock()

    def started(self, campaign: int, seed: int, store: Path, workspace: Path, resumed: int) -> None:
        self.next_run = self.done = resumed
        again = f", resuming after {resumed} runs" if resumed else ""
        self._write(f"campaign {campaign} (seed {seed}{again}) in store {safe_name(str(store))}; "
                    f"builds run in {safe_name(str(workspace))}\n")

    def run_finished(self, record: RunRecord, group: str | None, planned: int) -> None:
        self.walls.append(record.wall_s)
        self.next_run, self.planned = record.index + 1, planned
        self.done += 1
        outcome = f"group {group}" if group else record.status.value.upper()
        width = len(str(planned))
        line = (
            f"run {record.index:>{width}}/{planned}  {record.perturbation.describe():<44} "
            f"exit {record.exit_code if record.exit_code is not None else '-':>3}  {record.wall_s:7.2f}s  {outcome}"
            + ("  (reference)" if record.index == 0 else "")
        )
        if self.bar:
            self._write((CLEAR_BAR if self._bar_on_screen else "") + line + "\n", done=self.done)
        else:
            self._write(line + "\n")

    def phase(self, name: str) -> None:
        self.phase_name, self.phase_started_at = name, self.clock()
        self._write((CLEAR_BAR if self._bar_on_screen else "") + f"-- {name}\n")
        self._bar_on_screen = False

    def heartbeat(self) -> None:
        """One line saying what runs, if nothing was written for `heartbeat_s`."""
        now = self.clock()
        if now - self.last_line < self.heartbeat_s:
            return
        doing = f"run {self.next_run}/{self.planned or '?'} building" if self.phase_name == "explore" else "working"
        in_phase = _duration(now - self.phase_started_at)
        if in_phase != _duration(now - self.started_at):  # a late phase's own time, not only the campaign's
            doing += f" for {in_phase}"
        self._write(f"-- {self.phase_name}: {doing}, {_duration(now - self.started_at)} elapsed\n")

    def _beat(self) -> None:
        while not self._stopped.wait(max(0.0, self.last_line + self.heartbeat_s - self.clock())):
            self.heartbeat()

    def _draw_bar(self, done: int) -> None:
        """click draws the bar (and hides the cursor while it shows); the ETA is ours: the mean
        build's wall time for each run left (`parallel` at once), known from the first run on,
        and never past the end of the budget, which ends the campaign first."""
        if self._progress is None:
            self._progress = click.progressbar(length=max(self.planned, 1), file=self.stream, width=30,
                                               fill_char="#", empty_char=".", bar_template="[%(bar)s] %(info)s",
                                               show_pos=True, show_percent=False, show_eta=False,
                                               item_show_func=lambda _: self._eta())
        self._progress.length = max(self.planned, 1)
        self._progress.update(done - self._progress.pos)
        self._bar_on_screen = True

    def _eta(self) -> str:
        mean = sum(self.walls) / len(self.walls)
        left = mean * max(self.planned - self.done, 0) / self.parallel
        if self.budget_s is not None:
            left = min(left, max(self.started_at + self.budget_s - self.clock(), 0.0))
        return f"ETA {left:5.0f}s"


def _duration(seconds: float) -> str:
    """1h02m, 12m30s, 45s: what a person reads in a log."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
