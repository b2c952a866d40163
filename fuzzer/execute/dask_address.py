"""What `--dask` names: a scheduler's address, or `local:N` for a cluster of N local worker
processes. Read without Dask installed: the configuration checks it before any import of Dask."""

from __future__ import annotations

from fuzzer.errors import UsageError
from fuzzer.escaping import shown

MAX_LOCAL_WORKERS = 256  # --dask local:N


def dask_local_workers(address: str) -> int | None:
    """N for `--dask local:N` (a cluster of N local worker processes), None for a scheduler's address."""
    if not address.startswith("local:"):
        if "://" not in address:
            raise UsageError(f"--dask takes a scheduler's address (tcp://HOST:8786) or local:N, got {shown(address)}")
        return None
    count = address.removeprefix("local:")
    if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
        raise UsageError(f"--dask local:N needs N between 1 and {MAX_LOCAL_WORKERS}, got {shown(address)}")
    return int(count)
