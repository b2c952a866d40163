"""Benchmark the tracing layer: analysis time/memory on big traces, and strace overhead.

    python bench/bench_trace.py            # N = 1000, 10000 traced, 100000 synthetic; C build x3
    python bench/bench_trace.py --quick    # N = 300, 1000; smaller C build x2
    python bench/bench_trace.py --smoke    # N = 100 traced, 300 synthetic; one small C build (seconds)
    python bench/bench_trace.py --sizes 10000 --against /path/to/main   # this tree's analysis and main's

Each N: generate a make build of N cheap steps (cp / head chains with dependencies),
trace it once at -j2 (timed, but not part of the measurement), then in a fresh
subprocess load the trace, build steps, find hazards and roots, and report wall and CPU
time (the trace reader's child's too, `fuzzer.trace.joiner`) and the subprocess's peak
RSS side by side. An N above --synthetic-above is not
traced (a 100k-step make under strace takes most of an hour): its trace is copies of a
traced TEMPLATE_STEPS-step build, renamed and shifted in time, one make's log with the
per-step shape of a real one. Targets: 10k steps in <= 10 s; 100k in <= 60 s and <= 2 GiB.

Overhead: a make -j2 of a generated C project of a few hundred gcc compiles (fewer with
--quick), fresh copies, untraced, traced, and traced with the removed files kept (each gcc
removes its /tmp/cc*.s: the reference's traced build) runs interleaved; target
traced/untraced <= 1.5.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzzer.execute import keep
from fuzzer.tools import strace
from fuzzer.trace.graph import find_roots
from fuzzer.trace.hazards import find_hazards
from fuzzer.trace.steps import load_trace

TARGETS = {10_000: (10.0, None), 100_000: (60.0, 2048)}  # steps → (seconds, MiB) at that size
TARGET_RATIO = 1.5
MEASURED = ("plain", "traced", "kept")  # untraced; traced; traced with removed files kept (the reference's)
TEMPLATE_STEPS = 1000


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
    cpu0 = time.process_time()
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
        # with the trace reader's child (fuzzer.trace.joiner), whose peak memory is its own
        "cpu_s": time.process_time() - cpu0 + _cpu(resource.RUSAGE_CHILDREN),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "reader_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    print(json.dumps(row))


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def bench_analysis(sizes: list[int], tmp: Path, synthetic_above: int, template_steps: int,
                   against: Path | None = None) -> list[dict]:
    analyses = [("this", __file__)] + ([(str(against), str(against / "bench" / "bench_trace.py"))] if against else [])
    rows: list[dict] = []
    template = None
    for size_index, n in enumerate(sizes):
        if n > synthetic_above:
            if template is None:
                template = trace_chain(tmp, template_steps, "template")
            root, trace_path, trace_s = template[0], tmp / f"chain{n}.trace", 0.0
            synthetic_trace(template[1], template_steps, n, trace_path)
        else:
            root, trace_path, trace_s = trace_chain(tmp, n, "chain")
        source = "synthetic" if n > synthetic_above else "traced"
        # this tree's analysis and, with --against, another checkout's on the same trace, the
        # order alternating from size to size so neither always runs on the cooler machine
        for label, script in analyses if size_index % 2 == 0 else analyses[::-1]:
            child = subprocess.run(
                [sys.executable, script, "--analyze", str(trace_path), str(root)],
                check=True,
                capture_output=True,
                text=True,
            )
            row = json.loads(child.stdout) | {"n": n, "source": source, "trace_s": trace_s, "tree": label,
                                              "trace_mib": trace_path.stat().st_size / 2**20}
            rows.append(row)
            print_row(row)
        trace_path.unlink()
        if n <= synthetic_above:
            shutil.rmtree(root)
    return rows


def trace_chain(tmp: Path, n: int, name: str) -> tuple[Path, Path, float]:
    """Trace a chain build of n steps: (its tree, its trace, seconds the traced build took)."""
    root = tmp / f"{name}{n}"
    write_chain_build(root, n)
    trace_path = tmp / f"{name}{n}-traced.trace"
    started = time.perf_counter()
    subprocess.run(strace.wrap(["make", "-j2", "-s"], str(trace_path)), cwd=root, check=True, stdout=subprocess.DEVNULL)
    return root, trace_path, time.perf_counter() - started


SYNTH_NAME = re.compile(r"\b(o|src/s)(\d+)\b")
FORKS = ("clone", "clone3", "vfork", "fork")


def synthetic_trace(template: Path, steps: int, n: int, out: Path) -> None:
    """A trace of `n` steps made of copies of a traced `steps`-step chain build: each copy
    renames its files (o1 → o1001...), its child pids and shifts its times past the last,
    so the copies are distinct steps of one make, with the per-step shape of a real trace."""
    lines = template.read_text(encoding="latin-1").splitlines(keepends=True)
    root = int(lines[0].split()[0])
    first = next(i for i, line in enumerate(lines) if _forks(line, root))
    last = max(i for i, line in enumerate(lines) if "+++ exited" in line and int(line.split()[0]) != root)
    body = [_template_line(line, root) for line in lines[first : last + 1]]
    pids = [pid for pid, _, _ in body if pid != root]
    span_pids = max(pids) - min(pids) + 1
    start, end = body[0][1], body[-1][1]
    with open(out, "w", encoding="latin-1") as sink:
        sink.writelines(lines[:first])
        for copy in range(-(-n // steps)):
            names, pid_shift, time_shift = copy * steps, copy * span_pids, copy * (end - start + 0.001)
            for pid, stamp, parts in body:
                pid = pid if pid == root else pid + pid_shift
                text = "".join(p if isinstance(p, str) else str(p[0] + (names if p[1] else pid_shift)) for p in parts)
                sink.write(f"{pid} {stamp + time_shift:.6f} {text}")
        sink.writelines(f"{line.split()[0]} {float(line.split()[1]) + time_shift:.6f} {line.split(None, 2)[2]}"
                        for line in lines[last + 1 :])


def _forks(line: str, root: int) -> bool:
    pid, _, rest = line.split(None, 2)
    return int(pid) == root and rest.startswith(FORKS)


def _template_line(line: str, root: int) -> tuple[int, float, list]:
    """(pid, time, parts): parts are text, or (number, True) for a file number to shift
    and (number, False) for a child pid (a fork's result)."""
    pid, time, rest = line.split(None, 2)
    parts: list = []
    at = 0
    for m in SYNTH_NAME.finditer(rest):
        parts += [rest[at : m.start(2)], (int(m[2]), True)]
        at = m.end(2)
    tail = rest[at:]
    fork = re.search(r"\) += (\d+)\n$", tail) if "resumed>" in rest or rest.startswith(FORKS) else None
    if fork and (rest.startswith(FORKS) or rest.startswith(tuple(f"<... {f} resumed>" for f in FORKS))):
        parts += [tail[: fork.start(1)], (int(fork[1]), False), tail[fork.end(1) :]]
    else:
        parts.append(tail)
    return int(pid), float(time), parts


def print_row(row: dict) -> None:
    seconds, mib = TARGETS.get(row["n"], (None, None))
    over = (seconds is not None and row["total_s"] > seconds) or (mib is not None and row["rss_mib"] > mib)
    verdict = "OVER" if over else "ok" if seconds is not None else ""
    print(
        f"{row['n']:>7} {row['source']:>9} {row['steps']:>7} {row['processes']:>7} {row['trace_s']:>8.1f}"
        f" {row['trace_mib']:>8.1f} {row['load_s']:>7.2f} {row['hazards_s']:>7.2f} {row['roots_s']:>7.2f}"
        f" {row['roots_half_s']:>7.2f} {row['total_s']:>7.2f} {row['cpu_s']:>7.2f} {row['rss_mib']:>8.0f}"
        f" {row['hazards']:>7}  {verdict}{'  ' + row['tree'] if row['tree'] != 'this' else ''}",
        flush=True,
    )


def write_c_build(root: Path, files: int, functions: int) -> None:
    """`files` files of `functions` small functions each, plus main.c, all including stdio.h."""
    root.mkdir(parents=True)
    objs = " ".join(f"f{i}.o" for i in range(files))
    (root / "Makefile").write_text(f"prog: {objs} main.o\n\tgcc -o prog $^\n%.o: %.c common.h\n\tgcc -O1 -c $< -o $@\n")
    (root / "common.h").write_text("#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\nint f(int);\n")
    for i in range(files):
        body = "".join(
            f"int f{i}_{k}(int x) {{ int s = 0; for (int j = 0; j < x; j++) s += j * {k} ^ (s >> 3); "
            f'return s + (int)strlen("abc"); }}\n'
            for k in range(functions)
        )
        (root / f"f{i}.c").write_text(f'#include "common.h"\n{body}')
    (root / "main.c").write_text('#include "common.h"\nint main(void) { printf("%d\\n", 1); return 0; }\n')


def bench_overhead(reps: int, tmp: Path, files: int, functions: int) -> dict[str, list[float]]:
    """Wall and CPU seconds (the build's processes plus strace) per mode, runs interleaved."""
    pristine = tmp / f"cbuild-{files}-{functions}"
    write_c_build(pristine, files, functions)
    times: dict[str, list[float]] = {f"{m}{cpu}": [] for m in MEASURED for cpu in ("", " cpu")}
    for rep in range(reps):
        for mode in MEASURED[rep % len(MEASURED):] + MEASURED[:rep % len(MEASURED)]:
            work = tmp / f"c-{mode}-{rep}"
            shutil.copytree(pristine, work)
            argv, env, trace, stash = ["make", "-j2", "-s"], dict(os.environ), str(tmp / f"c-{rep}.strace"), ()
            if mode != "plain":
                argv = strace.wrap(argv, trace)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            if mode == "kept":  # the traced reference's keep of removed files (fuzzer.execute.keep)
                stash = keep.open_stash(trace, env)
                env = keep.environment(stash, env)
            subprocess.run(argv, cwd=work, check=True, env=env)
            if stash:
                keep.settle(stash, trace)
            times[mode].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times[f"{mode} cpu"].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            shutil.rmtree(work)
    return times


def print_overhead(times: dict[str, list[float]], reps: int, files: int, functions: int) -> None:
    print(
        f"\nC build: make -j2 of {files + 1} gcc files with {functions} function(s) each, {reps} reps interleaved, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    for mode in MEASURED:
        print(
            f"  {mode:>6} wall s: {' '.join(f'{t:.2f}' for t in times[mode])}"
            f"   cpu s: {' '.join(f'{t:.2f}' for t in times[mode + ' cpu'])}"
        )
    median = statistics.median(times["traced"]) / statistics.median(times["plain"])
    best = min(times["traced"]) / min(times["plain"])
    cpu = statistics.median(times["traced cpu"]) / statistics.median(times["plain cpu"])
    print(f"  traced/untraced wall: median {median:.2f}, best {best:.2f} (target <= {TARGET_RATIO}); cpu: {cpu:.2f}")
    kept = statistics.median(times["kept"]) / statistics.median(times["traced"])
    kept_cpu = statistics.median(times["kept cpu"]) / statistics.median(times["traced cpu"])
    print(f"  traced with the keep/traced without: wall median {kept:.2f}, best "
          f"{min(times['kept']) / min(times['traced']):.2f}; cpu: {kept_cpu:.2f}")


def bench_scenario(reps: int, tmp: Path) -> None:
    """The issue's measure: one buildfuzz run of scenarios/clean-c, traced vs untraced,
    through the real executor (same workspace path, fresh copy each run)."""
    from fuzzer.execute.local import BuildSpec, LocalExecutor
    from fuzzer.execute.run import RunRequest
    from fuzzer.execute.workspace import Workspace
    from fuzzer.model import RunKind
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


MODES = {  # sizes, synthetic above, template steps, reps, C builds (files, functions), scenario reps
    "full": ([1000, 10_000, 100_000], 10_000, TEMPLATE_STEPS, 3, [(10, 1), (300, 30)], 7),
    "quick": ([300, 1000], 10_000, TEMPLATE_STEPS, 2, [(10, 1), (60, 30)], 3),
    "smoke": ([100, 300], 100, 100, 1, [(4, 1)], 1),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repetitions")
    parser.add_argument("--smoke", action="store_true", help="the smallest run of every part (seconds)")
    parser.add_argument(
        "--sizes", type=lambda text: [int(n) for n in text.split(",")], help="step counts to generate, e.g. 1000,10000"
    )
    parser.add_argument("--synthetic-above", type=int, help="step counts above this are synthetic traces")
    parser.add_argument("--against", type=Path, metavar="CHECKOUT",
                        help="also run the analysis of this other checkout (e.g. main's) on every trace, side by side")
    parser.add_argument("--analyze", nargs=2, metavar=("TRACE", "WORKSPACE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.analyze:
        analyze(*args.analyze)
        return 0
    reason = strace.STRACE.problem()
    if reason:
        print(f"cannot benchmark: {reason}", file=sys.stderr)
        return 2
    sizes, synthetic_above, template_steps, reps, builds, scenario_reps = MODES[
        "smoke" if args.smoke else "quick" if args.quick else "full"
    ]
    sizes = args.sizes or sizes
    synthetic_above = args.synthetic_above if args.synthetic_above is not None else synthetic_above
    with tempfile.TemporaryDirectory(prefix="bench-trace-") as tmp_dir:
        tmp = Path(tmp_dir)
        targets = ", ".join(f"{n} steps <= {s:.0f} s" + (f" and <= {m} MiB" if m else "") for n, (s, m) in TARGETS.items())
        print(f"analysis (targets: {targets}; trace not timed; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})")
        print(
            f"{'N':>7} {'source':>9} {'steps':>7} {'procs':>7} {'trace_s':>8} {'MiB':>8} {'load_s':>7} {'hazard':>7}"
            f" {'roots':>7} {'roots/2':>7} {'wall_s':>7} {'cpu_s':>7} {'rss_MiB':>8} {'hazards':>7}"
        )
        bench_analysis(sizes, tmp, synthetic_above, template_steps, args.against)
        # tiny files are the worst case (a traced gcc makes ~600 syscalls whatever the file);
        # a few hundred real ones are the build the target is about
        for files, functions in builds:
            print_overhead(bench_overhead(reps, tmp, files, functions), reps, files, functions)
        bench_scenario(scenario_reps, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
