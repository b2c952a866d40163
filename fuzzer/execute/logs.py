"""A run's log: what the build printed, plus buildfuzz's own notes, kept to a bounded size."""

from __future__ import annotations

import os
import re
from pathlib import Path

LOG_TAIL_LINES = 20
TAIL_BYTES = 64 << 10  # where a failed build's first error lines are looked for
SUMMARY_LINES = 5
LOG_LIMIT = 1 << 20  # keep the last MiB of a build's output
# what a failing build says, as opposed to the commands make echoes (`-Werror` is no error)
ERROR_LINE = re.compile(r"\berror\b|\*\*\*|fatal|no such file|not found|cannot|nonexistent|(?-i:^FAILED: )",
                        re.IGNORECASE)  # ninja: `FAILED: main.o`
# why it failed, as a summary quotes it: `error:`, `No such file`, make's `Error N`, `ld: cannot find`
FAILURE_LINE = re.compile(r"\berror\b|no such file|no rule to make|undefined reference|\bcannot\b|\bfatal\b",
                          re.IGNORECASE)
# the target whose recipe failed: make's `*** [Makefile:9: lexer.o] Error 1`, ninja's `FAILED: lexer.o`
FAILED_TARGET = re.compile(r"\*\*\* \[(?:[^\]:]*:\d+: )?([^\]]+)\] Error|^FAILED: (\S+)", re.MULTILINE)
SKIPPED = "[...]"  # between the first error lines and the last lines, when lines lie between them


def log_tail(path: Path | str, lines: int = LOG_TAIL_LINES) -> str:
    """The last `lines` lines of a log, after its first error lines (`failure_lines`) when
    those came earlier: under -j, the line that made a build fail is often followed by
    other jobs' warnings and make's "Leaving directory" lines, out of the tail."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - TAIL_BYTES))
            text = f.read().decode(errors="replace").splitlines()
    except OSError:
        return ""
    tail = text[-lines:]
    before = failure_lines("\n".join(text[:-lines]))
    return "\n".join([*before, SKIPPED, *tail] if before else tail)


def failure_lines(text: str, limit: int = SUMMARY_LINES) -> list[str]:
    """The first lines of a log that say why the build failed."""
    found = []
    for line in text.splitlines():
        if FAILURE_LINE.search(line) and line.strip() != SKIPPED:
            found.append(line)
            if len(found) == limit:
                break
    return found


def failure_summary(text: str, limit: int = SUMMARY_LINES) -> list[str]:
    """What a failed run's summary quotes: its first error lines, else its last lines."""
    return failure_lines(text, limit) or text.splitlines()[-limit:]


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


def failed_targets(text: str) -> set[str]:
    """The targets a build driver (make, ninja) said it failed to make, as it named them."""
    return {make or ninja for make, ninja in FAILED_TARGET.findall(text)}


def any_target_of(targets: set[str], paths) -> bool:
    """Whether a target a driver named (relative to where it ran: a sub-make's `x.o` for
    `sub/x.o`) is one of `paths`."""
    return any(p == t or p.endswith("/" + t) for t in targets for p in paths)
