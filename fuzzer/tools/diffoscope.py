"""diffoscope: structured diffs of archives, ELF files and the like, when installed."""

from __future__ import annotations

import subprocess

from fuzzer.tools import register, run

DIFFOSCOPE = register("diffoscope", "diffoscope", "structured diffs of differing artifacts")


def available() -> bool:
    return DIFFOSCOPE.available()


def report(a: str, b: str, fmt: str, timeout: float) -> str | None:
    """diffoscope's `text` or `html` report, or None when it is missing, fails or runs
    out of time (it is slow on large files: callers pass only files whose hashes differ)."""
    if not available():
        return None
    try:
        proc = run(DIFFOSCOPE, ["--no-progress", f"--{fmt}", "-", a, b], timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    # exit 1 means "differ", the expected answer here
    return proc.stdout.decode(errors="replace") if proc.returncode in (0, 1) else None
