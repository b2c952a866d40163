"""Facts of the host this process runs on, asked by every layer from the command line's
checks to the executors."""

from __future__ import annotations

import os


def available_cpus() -> tuple[int, ...]:
    """The CPUs this process may run on (its affinity), in order."""
    return tuple(sorted(os.sched_getaffinity(0)))
