"""make: only its version matters to buildfuzz (the prerequisite-order axis needs 4.4)."""

from __future__ import annotations

import functools
import re
import subprocess

from fuzzer.tools import register

MAKE = register("make", "make", "prerequisite-order axis (--shuffle needs GNU make 4.4 or later)")
SHUFFLE_SINCE = (4, 4)


@functools.cache
def version() -> tuple[int, int] | None:
    path = MAKE.path()
    if path is None:
        return None
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"GNU Make (\d+)\.(\d+)", out)
    return (int(m[1]), int(m[2])) if m else None


def shuffle_unavailable() -> str | None:
    found = version()
    if found is None:
        return "GNU make not found"
    if found < SHUFFLE_SINCE:
        return f"GNU make {found[0]}.{found[1]} has no --shuffle (it came in 4.4)"
    return None
