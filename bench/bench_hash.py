"""Benchmark observing a build: `take_manifest` against reading the same files with `cat`.

    python bench/bench_hash.py               # 1 GiB tree, 5 repetitions
    python bench/bench_hash.py --size-mib 4096 --reps 3
    python bench/bench_hash.py --smoke       # 16 MiB, one repetition: seconds (the tests run it)

The tree holds many small files (1-64 KiB), some medium (1-16 MiB) and a few large
(100 MiB and more). Every method first runs once untimed, which puts the whole tree in
the page cache (it cannot be dropped without root): the rows measure walking, reading and
hashing a warm cache, not the disk. Repetitions rotate the order of the methods, so a
noisy neighbour slows each of them alike; medians are printed, and the ratio of
take_manifest's throughput to cat's is the headline (target >= 0.8).

Besides the two, the table shows what the other hashes would cost on this machine, one
file after another: sha256 (take_manifest's hash before xxh3), `sha256sum` in one process,
and blake3 when it is installed (`pip install blake3`; the bench never installs it).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fuzzer.observe import ALGORITHM, take_manifest  # noqa: E402

MiB = 1 << 20
KiB = 1 << 10
TARGET = 0.8  # take_manifest / cat, throughput
CAT = "cat > /dev/null"
TAKE_MANIFEST = "buildfuzz take_manifest"


def generate_tree(root: Path, total: int, seed: int = 1) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """Mixed sizes: many small (1-64 KiB), some medium (1-16 MiB), a few large (100+ MiB,
    or half the tree when it is smaller). Returns files, bytes, and per bucket (files, bytes)."""
    rng = random.Random(seed)
    pool = os.urandom(min(32 * MiB, max(total, MiB)))
    large_total = max(int(0.3 * total), min(100 * MiB, total // 2))
    n_large = max(1, large_total // (100 * MiB))
    rest = total - large_total
    buckets: dict[str, list[int]] = {"small 1-64 KiB": [], "medium 1-16 MiB": [], "large": [large_total // n_large] * n_large}
    for name, lo, hi, budget in (("small 1-64 KiB", KiB, 64 * KiB, rest // 2),
                                 ("medium 1-16 MiB", MiB, 16 * MiB, rest - rest // 2)):
        used = 0
        while used < budget:
            size = min(rng.randint(lo, hi), max(lo, budget - used))
            buckets[name].append(size)
            used += size
    count = nbytes = 0
    for name, sizes in buckets.items():
        for i, size in enumerate(sizes):
            directory = root / name.split()[0] / f"d{i // 200:03d}"
            directory.mkdir(parents=True, exist_ok=True)
            with open(directory / f"f{i:05d}.bin", "wb") as f:
                left = size
                while left:
                    n = min(left, len(pool))
                    start = rng.randrange(0, len(pool) - n + 1)
                    f.write(pool[start:start + n])
                    left -= n
            count += 1
            nbytes += size
    return count, nbytes, {name: (len(sizes), sum(sizes)) for name, sizes in buckets.items()}


def _each_file(root: Path, digest: Callable[[], object]) -> int:
    """Hash every file with `digest` (a hashlib-style constructor), one after another."""
    n = 0
    for directory, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(directory, name), "rb", buffering=0) as f:
                hashlib.file_digest(f, digest)
            n += 1
    return n


def methods(root: Path) -> tuple[dict[str, Callable[[], object]], str]:
    """What is measured, and a note on what could not be."""
    quoted = subprocess.list2cmdline([str(root)])

    def shell(pipeline: str) -> Callable[[], object]:
        return lambda: subprocess.run(f"find {quoted} -type f -print0 | xargs -0 {pipeline}", shell=True, check=True)

    measured: dict[str, Callable[[], object]] = {
        CAT: shell("cat > /dev/null"),
        TAKE_MANIFEST: lambda: take_manifest(root),
        "hashlib sha256, one file after another": lambda: _each_file(root, hashlib.sha256),
        "sha256sum, one process": shell("sha256sum > /dev/null"),
    }
    try:
        import blake3
    except ImportError:
        return measured, "blake3 is not installed: not measured"
    measured["blake3, one file after another"] = lambda: _each_file(root, blake3.blake3)
    return measured, ""


def measure(measured: dict[str, Callable[[], object]], reps: int) -> dict[str, list[float]]:
    names = list(measured)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up: the page cache, the binaries
        measured[name]()
    for rep in range(reps):
        shift = rep % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            measured[name]()
            times[name].append(time.perf_counter() - started)
    return times


def report(times: dict[str, list[float]], nbytes: int) -> float:
    """Print the table; return take_manifest's throughput over cat's."""
    cat = statistics.median(times[CAT])
    width = max(map(len, times))
    print(f"  {'method':{width}}  {'median s':>9}  {'MB/s':>7}  {'vs cat':>6}  all reps (s)")
    for name, values in times.items():
        m = statistics.median(values)
        print(f"  {name:{width}}  {m:9.3f}  {nbytes / 1e6 / m:7.0f}  {cat / m:6.2f}  "
              + " ".join(f"{v:.3f}" for v in values))
    return cat / statistics.median(times[TAKE_MANIFEST])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, help="the tree's size (default 1024, --smoke 16)")
    parser.add_argument("--reps", type=int, help="repetitions (default 5, --smoke 1)")
    parser.add_argument("--smoke", action="store_true", help="a 16 MiB tree, one repetition: seconds")
    args = parser.parse_args()
    size = args.size_mib or (16 if args.smoke else 1024)
    reps = args.reps or (1 if args.smoke else 5)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {len(os.sched_getaffinity(0))} CPUs; "
          f"take_manifest hashes with {ALGORITHM}")
    with tempfile.TemporaryDirectory(prefix="bench-hash-") as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        count, nbytes, buckets = generate_tree(root, size * MiB)
        print(f"tree: {count} files, {nbytes / MiB:.0f} MiB: "
              + ", ".join(f"{name} {n} files {b / MiB:.0f} MiB" for name, (n, b) in buckets.items()))
        measured, note = methods(root)
        times = measure(measured, reps)
        shutil.rmtree(root)
    print(f"warm cache, {reps} repetition(s), order rotated; MB/s = 10^6 bytes per second")
    ratio = report(times, nbytes)
    if note:
        print(f"  {note}")
    print(f"ratio take_manifest / cat (throughput): {ratio:.2f}  (target >= {TARGET})  "
          f"{'ok' if ratio >= TARGET else 'UNDER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
