"""Holding one step back at its start, however short it lives (see native/hold.c).

A hold names a process by a hash of its exact argv, as the trace recorded it, and says
how long to delay it: `MILLISECONDS@HASH`, the value of the `hold` axis. The library
is preloaded into every process of the build; only the named one waits.
"""

from __future__ import annotations

import os
from pathlib import Path

from fuzzer.tools import cc

SOURCE = Path(__file__).with_name("native") / "hold.c"
ENV = "BUILDFUZZ_HOLD"
MAX_MS = 10_000


def argv_hash(argv: tuple[str, ...]) -> str:
    """FNV-1a 64 of the argv as /proc/PID/cmdline shows it (NUL after each word)."""
    h = 1469598103934665603
    for byte in b"".join(os.fsencode(word) + b"\0" for word in argv):
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def value(argv: tuple[str, ...], ms: int) -> str:
    return f"{max(1, min(ms, MAX_MS))}@{argv_hash(argv)}"


def problem() -> str | None:
    built = cc.shared_library(SOURCE)
    return built if isinstance(built, str) else None


def environment(hold: str, env: dict[str, str]) -> dict[str, str]:
    """`env` with the library preloaded and the hold set."""
    library = str(cc.shared_library(SOURCE))
    preload = " ".join(p for p in (library, env.get("LD_PRELOAD", "")) if p)
    return {**env, "LD_PRELOAD": preload, ENV: hold}
