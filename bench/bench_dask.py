"""Per-run overhead of the Dask executor against the local one, on a ~5 s build.

    python bench/bench_dask.py            # 7 runs a side, ABBA
    python bench/bench_dask.py --quick    # 3 runs a side

Both sides run the same `RunRequest`s (jobs=2, all CPUs, no jitter, no trace) of one
generated make project: four C files compiled with gcc -O2, then a recipe that sleeps,
about 5 s in all. The local side is `LocalExecutor(spec).run(request)`; the Dask side is
`DaskExecutor.run(request)` on `--dask local:1` (one worker process on loopback, so runs
go one at a time, as locally). A run's time is what the campaign waits: from the request
to the record, the record's log (and trace) written here. The sides alternate ABBA after
one untimed run each (a worker's first build fetches and unpacks the source; a local
executor's first build starts its guard). Printed: medians, the ratio Dask / local (the
target is <= 1.05) and the absolute overhead per run; then the same on a build that
does next to nothing, whose difference is the fixed cost a run pays on the Dask path
(less noisy than a difference of 5 s medians on a shared machine); the once-per-campaign
cost; and the bytes a run puts on the network (the task and its result), which the
scaling model in docs/distributed.md builds on. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fuzzer.model import available_cpus  # noqa: E402
from fuzzer.execute.local import BuildSpec, LocalExecutor  # noqa: E402
from fuzzer.execute.run import RunRequest  # noqa: E402
from fuzzer.execute.workspace import Workspace  # noqa: E402
from fuzzer.plan import Perturbation  # noqa: E402

from bench_parallel import FILES, cpu_bound  # noqa: E402  (bench/ is this script's directory)

SLEEP_S = 4.0  # the rest of the ~5 s


def make_empty_project(root: Path) -> None:
    """A build that does next to nothing: what a run costs beyond the build itself."""
    (root / "Makefile").write_text("all:\n\techo done > out\n")


def make_project(root: Path) -> None:
    """bench_parallel's CPU-bound project (four C files, ~0.25 s of gcc -O2 each at -j2),
    then a recipe that waits, like a test step."""
    cpu_bound(root)
    makefile = root / "Makefile"
    makefile.write_text(makefile.read_text().replace("all: lib.a\n", "all: lib.a check\n", 1)
                        + f"check: lib.a\n\tsleep {SLEEP_S}\n")


def spec_for(source: Path, store: Path) -> BuildSpec:
    workspace = Workspace(source, store / "workspace" / "src", exclude=frozenset({store}))
    return BuildSpec("make -j{jobs}", workspace, store / "logs")


def timed(executor, index: int) -> float:
    request = RunRequest(index, Perturbation(jobs=2, cpus=available_cpus(), jitter=0.0, seed=0))
    started = time.monotonic()
    record = executor.run(request)
    assert record.ok, record.log_tail
    return time.monotonic() - started


def network_bytes(pool, executor) -> tuple[int, int]:
    """The pickled size of one build task's arguments and of its result."""
    from fuzzer.execute.dask_worker import run_build

    request = RunRequest(999, Perturbation(jobs=2, cpus=available_cpus(), jitter=0.0, seed=0))
    arguments = (executor.site, request, uuid.uuid4().hex)
    result = pool.client.submit(run_build, *arguments, resources={"builds": 1}, pure=False).result()
    return len(pickle.dumps(arguments)), len(pickle.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 runs a side instead of 7")
    parser.add_argument("--smoke", action="store_true", help="the empty build only, 1 run a side: CI")
    args = parser.parse_args()
    reps = 1 if args.smoke else 3 if args.quick else 7
    from fuzzer.execute.dask_executor import DaskPool

    with tempfile.TemporaryDirectory(prefix="bench-dask-") as scratch:
        started = time.monotonic()
        pool = DaskPool("local:1")
        connect_s = time.monotonic() - started
        try:
            if not args.smoke:
                print(f"~5 s build, {reps} runs a side:")
                first, times, _ = side_by_side(pool, Path(scratch, "5s"), make_project, reps)
                report(times, first)
            print(f"an empty build, {3 * reps} runs a side (the fixed cost of a run):")
            first, times, (task_bytes, result_bytes) = side_by_side(pool, Path(scratch, "empty"), make_empty_project,
                                                                    3 * reps)
            report(times, first)
        finally:
            pool.close()
    print(f"once per campaign: a LocalCluster of 1 worker up in {connect_s:.1f} s")
    print(f"network per run: task {task_bytes / 1024:.1f} KiB, result {result_bytes / 1024:.1f} KiB "
          f"(manifest of {FILES * 2 + 3} files and the log)")


def side_by_side(pool, scratch: Path, make, reps: int):
    """(first runs, timed runs, network bytes) of the local and the Dask executor, ABBA."""
    source = scratch / "src"
    source.mkdir(parents=True)
    make(source)
    local, remote = LocalExecutor(spec_for(source, scratch / "local")), pool(spec_for(source, scratch / "remote"))
    try:
        first = {"local": timed(local, 0), "dask": timed(remote, 0)}
        times: dict[str, list[float]] = {"local": [], "dask": []}
        for rep in range(reps):
            order = (("local", local), ("dask", remote)) if rep % 2 == 0 else (("dask", remote), ("local", local))
            for name, executor in order:
                times[name].append(timed(executor, rep + 1))
        return first, times, network_bytes(pool, remote)
    finally:
        local.close()


def report(times: dict[str, list[float]], first: dict[str, float]) -> None:
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        every = ", ".join(f"{v:.2f}" for v in values)
        print(f"  {name:<6} per run: median {medians[name]:.3f} s (all reps: {every}); first run {first[name]:.2f} s")
    print(f"  ratio dask / local: {medians['dask'] / medians['local']:.3f}; "
          f"overhead per run: {1000 * (medians['dask'] - medians['local']):.0f} ms")


if __name__ == "__main__":
    main()
