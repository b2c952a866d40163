"""A run's log: what the build printed, plus buildfuzz's own notes, kept to a bounded size."""

from __future__ import annotations

import os
import re
from pathlib import Path

LOG_TAIL_LINES = 20
LOG_LIMIT = 1 << 20  # keep the last MiB of a build's output
# what a failing build says, as opposed to the commands make echoes (`-Werror` is no error)
ERROR_LINE = re.compile(r"\berror\b|\*\*\*|fatal|no such file|not found|cannot|nonexistent", re.IGNORECASE)


def log_tail(path: Path | str, lines: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - 16384))
            return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def note(path: Path, text: str) -> None:
    """Say in the run's log what buildfuzz did to the build, where the log tail shows it."""
    if text:
        with open(path, "a", encoding="utf-8", errors="surrogateescape") as log:  # names as their bytes
            log.write(f"\nbuildfuzz: {text}\n")


def trim_log(path: Path) -> None:
    """Keep only the tail of a huge log: a night of runs must not fill the disk."""
    try:
        size = path.stat().st_size
        if size <= LOG_LIMIT:
            return
        with open(path, "rb") as f:
            f.seek(size - LOG_LIMIT)
            tail = f.read()
        path.write_bytes(b"[... log trimmed by buildfuzz ...]\n" + tail)
    except OSError:
        pass


def error_lines(text: str) -> str:
    """The lines of a build log that report a failure, not the commands it echoed."""
    return "\n".join(line for line in text.splitlines() if ERROR_LINE.search(line))

