"""Which executor a campaign's builds go to, from its configuration."""

from __future__ import annotations

import sys
from typing import Protocol

from fuzzer.errors import UsageError
from fuzzer.execute.executor import Executor
from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.escaping import safe_name
from fuzzer.tools import unshare


class Placement(Protocol):
    """What choosing an executor reads of the campaign's configuration (a `FuzzConfig`,
    which lives above the executors)."""

    @property
    def parallel(self) -> int: ...

    @property
    def dask(self) -> str | None: ...

    @property
    def shared_source(self) -> bool: ...


def executor_factory(config: Placement):
    """A callable BuildSpec → Executor for this configuration: this machine, `--parallel`
    slots where builds can get their own mount namespace, else one (said once, here on
    stderr and in the report). Localization and replays use only `run`, which is always
    the one-slot path: at the campaign's path, outside any namespace. With `--dask`, the
    workers of a Dask cluster."""
    if config.dask is not None:
        return dask_pool(config)
    slots = parallel_slots(config)
    if slots < config.parallel:
        sys.stderr.write(f"buildfuzz: {safe_name(serial_fallback(config))}\n")
    isolation = unshare.isolation() if slots > 1 else None

    def make(spec: BuildSpec) -> Executor:
        return LocalExecutor(spec, slots, isolation)

    return make


def dask_pool(config: Placement):
    """The cluster's executors (connected now: a bad address fails before anything is built)."""
    try:
        from fuzzer.execute.dask_executor import DaskPool
    except ModuleNotFoundError as e:
        if e.name not in ("dask", "distributed"):
            raise
        raise UsageError(f"--dask needs {e.name}, which is not installed: pip install 'buildfuzz[dask]'") from None
    return DaskPool(config.dask, config.shared_source)


def parallel_slots(config: Placement) -> int:
    """How many builds run at once on this host: --parallel, if mount namespaces allow it."""
    if config.parallel > 1 and unshare.isolation() is None:
        return 1
    return config.parallel


def serial_fallback(config: Placement) -> str:
    """Why --parallel N ran one build at a time ('' when it did not)."""
    if parallel_slots(config) == config.parallel:
        return ""
    return (f"--parallel {config.parallel}: builds ran one at a time, since each parallel build needs "
            f"a mount namespace of its own and none is available here ({unshare.UNSHARE.problem()})")
