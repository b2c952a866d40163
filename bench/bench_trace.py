"""Benchmark the tracing layer: analysis time/memory on big traces, and strace overhead.

    python bench/bench_trace.py            # N = 1000, 3000, 10000 steps; C build x3
    python bench/bench_trace.py --quick    # N = 300, 1000; C build x2 (< 1 min)

Each N: generate a make build of N cheap steps (cp / head chains with dependencies),
trace it once at -j2 (timed, but not part of the measurement), then in a fresh
subprocess load the trace, build steps, find hazards and roots, and report wall time and
the subprocess's peak RSS. Targets: 10k steps in <= 30 s and <= 1 GiB.

Overhead: a make -j2 of ten tiny C files with gcc (and, without --quick, of ten
300-function files), fresh copies, traced and untraced runs interleaved; target
traced/untraced <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzzer.tools import strace
from fuzzer.trace.graph import find_roots
from fuzzer.trace.hazards import find_hazards
from fuzzer.trace.steps import load_trace

TARGET_S = 30.0
TARGET_RSS_MIB = 1024
TARGET_RATIO = 1.5
C_FILES = 10


def write_chain_build(root: Path, n: int) -> None:
    """N steps: every 10th copies a source; the others read one or two earlier outputs
    and keep their first bytes (bounded sizes: outputs must not snowball)."""
    (root / "src").mkdir(parents=True)
    rules = [f"all: {' '.join(f'o{i}' for i in range(n))}\n"]
    for i in range(n):
        if i % 10 == 0:
            (root / "src" / f"s{i}").write_text(f"source {i}\n")
            rules.append(f"o{i}: src/s{i}\n\tcp src/s{i} o{i}\n")
        else:
            names = " ".join(f"o{d}" for d in sorted({i - 1, i // 2}))
            rules.append(f"o{i}: {names}\n\thead -q -c 32 {names} > o{i}\n")
    (root / "Makefile").write_text("".join(rules))


def analyze(trace_path: str, workspace: str) -> None:
    """Child mode: time each stage, print JSON with this process's peak RSS.

    Roots are searched twice: for three differing files, and for the later-written half
    of all outputs (every one of them a consequence of another: the walk's worst case)."""
    t0 = time.perf_counter()
    trace = load_trace(trace_path, workspace)
    t1 = time.perf_counter()
    hazards = find_hazards([trace])
    t2 = time.perf_counter()
    written = sorted(trace.writers_of, key=lambda path: trace.writers(path)[0].start)
    few = {written[len(written) // 2], *written[-2:]}
    roots = find_roots(trace, trace, few)
    t3 = time.perf_counter()
    find_roots(trace, trace, set(written[len(written) // 2 :]))
    t4 = time.perf_counter()
    row = {
        "steps": len(trace.steps),
        "processes": len(trace.processes),
        "hazards": len(hazards),
        "roots": len(roots),
        "load_s": t1 - t0,
        "hazards_s": t2 - t1,
        "roots_s": t3 - t2,
        "roots_half_s": t4 - t3,
        "total_s": t4 - t0,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(row))


def bench_analysis(sizes: list[int], tmp: Path) -> list[dict]:
    rows = []
    for n in sizes:
        root = tmp / f"chain{n}"
        write_chain_build(root, n)
        trace_path = tmp / f"chain{n}.trace"
        started = time.perf_counter()
        subprocess.run(
            strace.wrap(["make", "-j2", "-s"], str(trace_path)), cwd=root, check=True, stdout=subprocess.DEVNULL
        )
        trace_s = time.perf_counter() - started
        child = subprocess.run(
            [sys.executable, __file__, "--analyze", str(trace_path), str(root)],
            check=True,
            capture_output=True,
            text=True,
        )
        row = json.loads(child.stdout) | {"n": n, "trace_s": trace_s, "trace_mib": trace_path.stat().st_size / 2**20}
        rows.append(row)
        print_row(row)
        shutil.rmtree(root)
        trace_path.unlink()
    return rows


def print_row(row: dict) -> None:
    ok = "ok" if row["total_s"] <= TARGET_S and row["rss_mib"] <= TARGET_RSS_MIB else "OVER"
    print(
        f"{row['n']:>6} {row['steps']:>6} {row['processes']:>6} {row['trace_s']:>8.1f} {row['trace_mib']:>8.1f}"
        f" {row['load_s']:>7.2f} {row['hazards_s']:>7.2f} {row['roots_s']:>7.2f} {row['roots_half_s']:>7.2f}"
        f" {row['total_s']:>7.2f}"
        f" {row['rss_mib']:>8.0f}  {ok}",
        flush=True,
    )


def write_c_build(root: Path, functions: int) -> None:
    """Ten files of `functions` small functions each, plus main.c, all including stdio.h."""
    root.mkdir(parents=True)
    objs = " ".join(f"f{i}.o" for i in range(C_FILES))
    (root / "Makefile").write_text(f"prog: {objs} main.o\n\tgcc -o prog $^\n%.o: %.c common.h\n\tgcc -O1 -c $< -o $@\n")
    (root / "common.h").write_text("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\nint f(int);\n")
    for i in range(C_FILES):
        body = "".join(
            f"int f{i}_{k}(int x) {{ int s = 0; for (int j = 0; j < x; j++) s += j * {k} ^ (s >> 3); "
            f'return s + (int)strlen("abc"); }}\n'
            for k in range(functions)
        )
        (root / f"f{i}.c").write_text(f'#include "common.h"\n{body}')
    (root / "main.c").write_text('#include "common.h"\nint main(void) { printf("%d\\n", 1); return 0; }\n')


def bench_overhead(reps: int, tmp: Path, functions: int) -> dict[str, list[float]]:
    """Wall and CPU seconds (the build's processes plus strace) per mode, runs interleaved."""
    pristine = tmp / f"cbuild-{functions}"
    write_c_build(pristine, functions)
    times: dict[str, list[float]] = {"plain": [], "traced": [], "plain cpu": [], "traced cpu": []}
    for rep in range(reps):
        for mode in ("plain", "traced") if rep % 2 == 0 else ("traced", "plain"):
            work = tmp / f"c-{mode}-{rep}"
            shutil.copytree(pristine, work)
            argv = ["make", "-j2", "-s"]
            if mode == "traced":
                argv = strace.wrap(argv, str(tmp / f"c-{rep}.trace"))
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(argv, cwd=work, check=True)
            times[mode].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[f"{mode} cpu"].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            shutil.rmtree(work)
    return times


def print_overhead(times: dict[str, list[float]], reps: int, functions: int) -> None:
    print(
        f"\nC build: make -j2 of {C_FILES + 1} gcc files with {functions} function(s) each, {reps} reps interleaved, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    for mode in ("plain", "traced"):
        print(
            f"  {mode:>6} wall s: {' '.join(f'{t:.2f}' for t in times[mode])}"
            f"   cpu s: {' '.join(f'{t:.2f}' for t in times[mode + ' cpu'])}"
        )
    median = statistics.median(times["traced"]) / statistics.median(times["plain"])
    best = min(times["traced"]) / min(times["plain"])
    cpu = statistics.median(times["traced cpu"]) / statistics.median(times["plain cpu"])
    print(f"  traced/untraced wall: median {median:.2f}, best {best:.2f} (target <= {TARGET_RATIO}); cpu: {cpu:.2f}")


def bench_scenario(reps: int, tmp: Path) -> None:
    """The issue's measure: one buildfuzz run of scenarios/clean-c, traced vs untraced,
    through the real executor (same workspace path, fresh copy each run)."""
    from fuzzer.execute.local import BuildSpec, LocalExecutor
    from fuzzer.execute.run import RunKind, RunRequest
    from fuzzer.execute.workspace import Workspace
    from fuzzer.plan import Perturbation

    source = Path(__file__).resolve().parents[1] / "scenarios" / "clean-c"
    spec = BuildSpec("make -j{jobs}", Workspace(source, tmp / "ws" / "clean-c"), tmp / "logs")
    perturbation = Perturbation(2, tuple(sorted(os.sched_getaffinity(0))))
    walls: dict[bool, list[float]] = {False: [], True: []}
    with LocalExecutor(spec) as executor:
        for rep in range(reps):
            for traced in (False, True) if rep % 2 == 0 else (True, False):
                kind = RunKind.TRACE if traced else RunKind.EXPLORE
                record = executor.run(RunRequest(rep, perturbation, kind, trace=traced))
                assert record.ok, record.log_tail
                walls[traced].append(record.wall_s)
    spec.workspace.remove()
    ratio = statistics.median(walls[True]) / statistics.median(walls[False])
    print(f"\nscenarios/clean-c through LocalExecutor (make -j2), {reps} reps interleaved")
    for traced in (False, True):
        print(f"  {'traced' if traced else 'plain':>6} wall s: {' '.join(f'{t:.2f}' for t in walls[traced])}")
    print(f"  traced/untraced wall: median {ratio:.2f} (target <= {TARGET_RATIO})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repetitions")
    parser.add_argument(
        "--sizes", type=lambda text: [int(n) for n in text.split(",")], help="step counts to generate, e.g. 1000,10000"
    )
    parser.add_argument("--analyze", nargs=2, metavar=("TRACE", "WORKSPACE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.analyze:
        analyze(*args.analyze)
        return 0
    reason = strace.available()
    if reason:
        print(f"cannot benchmark: {reason}", file=sys.stderr)
        return 2
    sizes, reps = ([300, 1000], 2) if args.quick else ([1000, 3000, 10000], 3)
    sizes = args.sizes or sizes
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp_dir:
        tmp = Path(tmp_dir)
        print(f"analysis (targets: <= {TARGET_S:.0f} s, <= {TARGET_RSS_MIB} MiB at 10k steps; trace not timed)")
        print(
            f"{'N':>6} {'steps':>6} {'procs':>6} {'trace_s':>8} {'MiB':>8} {'load_s':>7} {'hazard':>7}"
            f" {'roots':>7} {'roots/2':>7} {'total':>7} {'rss_MiB':>8}"
        )
        bench_analysis(sizes, tmp)
        # tiny files are the worst case (a traced gcc makes ~600 syscalls whatever the file);
        # bigger ones show how that cost amortizes
        for functions in (1,) if args.quick else (1, 300):
            print_overhead(bench_overhead(reps, tmp, functions), reps, functions)
        bench_scenario(3 if args.quick else 7, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
