"""Live progress of a campaign: one plain line per run (logs, CI), or a bar with an ETA
on a terminal, or nothing but the summary with --quiet."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from fuzzer.execute.run import RunRecord
from fuzzer.report.terminal import safe_name


class ConsoleEvents:
    def __init__(self, stream: TextIO = sys.stderr, quiet: bool = False, bar: bool | None = None):
        self.stream = stream
        self.quiet = quiet
        self.bar = stream.isatty() if bar is None else bar
        self.started_at = time.monotonic()
        self.walls: list[float] = []

    def _write(self, text: str) -> None:
        if not self.quiet:
            self.stream.write(text)
            self.stream.flush()

    def started(self, campaign: int, seed: int, workspace: Path, resumed: int) -> None:
        again = f", resuming after {resumed} runs" if resumed else ""
        self._write(f"campaign {campaign} (seed {seed}{again}); builds run in {safe_name(str(workspace))}\n")

    def run_finished(self, record: RunRecord, group: str | None, planned: int) -> None:
        self.walls.append(record.wall_s)
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
        self._write(("\r\033[K" if self.bar else "") + f"-- {name}\n")

    def _bar(self, done: int, planned: int, width: int = 30) -> str:
        filled = int(width * done / max(planned, 1))
        mean = sum(self.walls) / len(self.walls)
        eta = mean * max(planned - done, 0)
        return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{planned}  ETA {eta:5.0f}s"
