"""Facts of the host this process runs on, asked by every layer from the command line's
checks to the executors."""

from __future__ import annotations

import os
from pathlib import Path


def available_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity), in order."""
    return tuple(sorted(os.sched_getaffinity(0)))


def cache_dir() -> Path:
    """Where buildfuzz keeps what outlives a campaign on this host: compiled helpers, stores."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "buildfuzz"
