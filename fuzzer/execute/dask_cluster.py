"""Reaching a Dask cluster: connecting to a scheduler (or starting a LocalCluster for
`--dask local:N`) with Dask's log lines silenced, noting which workers started each build
task, and letting go of it all at the end."""

from __future__ import annotations

import logging
import os

import dask
from distributed import Client, LocalCluster

from fuzzer.errors import UsageError
from fuzzer.escaping import shown
from fuzzer.execute.dask_address import dask_local_workers
from fuzzer.execute.dask_worker import forget

BUILDS = "builds"  # the worker resource a build takes one unit of
CONNECT_TIMEOUT_S = 10  # the scheduler answers at once when it is there
WORKERS_WAIT_S = 60  # a scheduler started a moment ago may have no worker yet
SLOTS_REFRESH_S = 5.0  # workers come and go (adaptive clusters): count them again this often
WORKER_CHECK_S = 2.0  # while waiting on a pinned task, look this often whether its worker is still there


def quiet_dask_logs() -> None:
    """Every failure that matters reaches the campaign as an exception, said in one line;
    Dask's own log lines (reconnection tracebacks, worker restarts) would only garble the
    terminal. Its configuration gives some loggers levels of their own."""
    names = [name for name in logging.root.manager.loggerDict if name.startswith("distributed.")]
    for name in ["distributed", *names]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def connect(address: str) -> tuple[Client, LocalCluster | None]:
    workers = dask_local_workers(address)
    if workers is not None:
        # Nannies run in this process and set their workers' variables (PYTHONHASHSEED=6640,
        # OMP_NUM_THREADS=1, ...) in its environment: builds start from the pool's copy taken
        # before, and this process gets its own back.
        saved = dict(os.environ)
        with dask.config.set({"distributed.nanny.pre-spawn-environ": {}}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=None, resources={BUILDS: 1}, silence_logs=logging.CRITICAL)
        os.environ.clear()
        os.environ.update(saved)
        return Client(cluster, set_as_default=False), cluster
    try:
        return Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False), None
    except (OSError, TimeoutError, ValueError) as e:
        raise UsageError(f"--dask: cannot reach a Dask scheduler at {shown(address)}: {e}") from None


def shutdown(client: Client, cluster: LocalCluster | None, paths: list[str], sources: dict) -> None:
    """The workers drop the trees they kept and their copies of the sources, the scheduler
    the archives; then the connection (and our own cluster) goes."""
    try:
        if client.status == "running":
            client.run(forget, list(paths), [digest for digest, _, _ in sources.values()])
            for _, _, archive in sources.values():
                archive.delete()
    except (OSError, TimeoutError):
        pass  # a worker gone meanwhile kept nothing
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class Attempts:
    """Which workers started each build task (events the tasks log), to note retries."""

    def __init__(self) -> None:
        self._workers: dict[str, list[str]] = {}

    def add(self, event: tuple[float, dict]) -> None:
        message = event[1]
        self._workers.setdefault(message["key"], []).append(message["worker"])

    def retry_note(self, key: str, finished_on: str) -> str:
        lost = [worker for worker in self._workers.pop(key, []) if worker != finished_on]
        return "; ".join(f"retried after worker {worker} was lost" for worker in dict.fromkeys(lost))
