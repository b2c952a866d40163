"""Builds per hour with --parallel 1 and --parallel 2, for a CPU-bound and a sleep-bound build.

    python bench/bench_parallel.py            # 9 runs per campaign, 3 repetitions
    python bench/bench_parallel.py --quick    # 5 runs, 1 repetition

Each measurement is one real campaign (`run_campaign`, default axes and job range, no
localization) of a generated make project: CPU-bound (gcc -O2 on four C files) or
sleep-bound (four recipes that sleep). Builds per hour = runs / the explore phase's
wall time, the reference included (it runs alone, at -j1, in both modes); "after the
reference" leaves out the reference's build time, which a longer campaign amortises. The campaigns of one
build kind alternate between the modes, ABBA, so a busy neighbour slows both; medians
and the ratio parallel 2 / parallel 1 are printed. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fuzzer.campaign import run_campaign  # noqa: E402
from fuzzer.config import FuzzConfig  # noqa: E402
from fuzzer.model import available_cpus  # noqa: E402
from fuzzer.tools import unshare  # noqa: E402

SEED = 11
MODES = (1, 2)
FILES = 4  # per project: four jobs to share out


def cpu_bound(root: Path) -> None:
    """Four C files, ~0.5 s of gcc -O2 each, and a link."""
    for k in range(FILES):
        body = [f"int f{k}_{f}(int x, int y) {{" + "".join(
            f" x = (x * {i * 7 + 3 + f}) ^ (y + {i}); if (x & {i % 13 + 1}) y += x >> {i % 5 + 1};"
            for i in range(30)) + " return x + y; }" for f in range(20)]
        (root / f"k{k}.c").write_text("\n".join(body) + "\n")
    objects = " ".join(f"k{k}.o" for k in range(FILES))
    (root / "Makefile").write_text(f"all: lib.a\nlib.a: {objects}\n\tar rcD $@ $^\n%.o: %.c\n\tgcc -O2 -c $< -o $@\n")


def sleep_bound(root: Path) -> None:
    """Four recipes that each wait 0.5 s (I/O, network, a slow tool) and write a file."""
    outputs = " ".join(f"s{k}.txt" for k in range(FILES))
    (root / "Makefile").write_text(f"all: {outputs}\ns%.txt:\n\tsleep 0.5; echo $* > $@\n")


def builds_per_hour(source: Path, scratch: Path, parallel: int, runs: int) -> tuple[float, float, int]:
    """(builds per hour, the same after the reference, runs that overlapped another) of one campaign."""
    config = FuzzConfig(source=source, command="make -j{jobs}", store=scratch / f"store-{parallel}", runs=runs,
                        seed=SEED, localize=False, parallel=parallel)
    report = run_campaign(config).report
    assert report.verdict == "reproducible", (report.verdict, report.exit_reason)
    explore = report.phases["explore"]
    after_reference = (len(report.runs) - 1) / (explore - report.runs[0].wall_s) * 3600
    return len(report.runs) / explore * 3600, after_reference, sum(bool(r.overlapped_with) for r in report.runs)


def measure(kind: str, make_project, runs: int, reps: int) -> None:
    with tempfile.TemporaryDirectory(prefix=f"bench-parallel-{kind}-") as scratch:
        source = Path(scratch, "src")
        source.mkdir()
        make_project(source)
        measured: dict[int, list[tuple[float, float, int]]] = {mode: [] for mode in MODES}
        for rep in range(reps):
            for mode in MODES if rep % 2 == 0 else reversed(MODES):  # ABBA
                measured[mode].append(builds_per_hour(source, Path(scratch, f"rep{rep}"), mode, runs))
        medians = {mode: [statistics.median(column) for column in zip(*measured[mode])] for mode in MODES}
        for mode in MODES:
            every = ", ".join(f"{rate:.0f}" for rate, _, _ in measured[mode])
            rate, after, overlapping = medians[mode]
            print(f"  {kind:<12} --parallel {mode}: {rate:6.0f} builds/h (all reps: {every}), "
                  f"{after:6.0f} after the reference; runs overlapping another: {overlapping:.0f} of {runs}")
        ratios = [two / one for one, two in zip(medians[1][:2], medians[2][:2])]
        print(f"  {kind:<12} ratio parallel 2 / parallel 1: {ratios[0]:.2f} ({ratios[1]:.2f} after the reference)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="runs per campaign (the reference included)")
    parser.add_argument("--reps", type=int, default=3, help="campaigns per mode and build kind")
    parser.add_argument("--quick", action="store_true", help="5 runs, 1 repetition")
    parser.add_argument("--smoke", action="store_true", help="the sleep-bound build only, 3 runs, 1 repetition: CI")
    args = parser.parse_args()
    runs, reps = (3, 1) if args.smoke else (5, 1) if args.quick else (args.runs, args.reps)
    if unshare.isolation() is None:
        sys.exit(f"--parallel 2 would run one build at a time here: {unshare.UNSHARE.problem()}")
    print(f"CPUs {len(available_cpus())}, load average {os.getloadavg()[0]:.2f}, {unshare.isolation().mode}; "
          f"{runs} runs per campaign, {reps} repetitions ABBA")
    if not args.smoke:
        measure("cpu-bound", cpu_bound, runs, reps)
    measure("sleep-bound", sleep_bound, runs, reps)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
