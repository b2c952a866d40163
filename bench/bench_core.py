"""Benchmark buildfuzz's core: run overhead, hashing throughput, builds to detection.

    python bench/bench_core.py               # everything (a, b, c)
    python bench/bench_core.py --quick       # fewer reps and seeds, 200 MiB tree (< 3 min)
    python bench/bench_core.py --only b      # one benchmark (a, b or c; repeatable)
    python bench/bench_core.py --smoke       # one rep of (a), a 16 MiB (b), (c) on jobs-output: CI

(a) overhead  — one `LocalExecutor.run` (jobs=2, all CPUs, no jitter, no trace: fresh
    workspace copy + guard + manifest hashing) vs the bare `make -j2` in a fresh
    shutil.copytree copy of the same tree; the copy is timed in BOTH. Target <= 1.05.
(b) hashing   — bench_hash.py: `take_manifest` vs `cat` reading the same generated tree
    of mixed file sizes, page cache warmed first. Target >= 0.8.
(c) detection — builds until the first divergence or perturbed failure (the reference
    is build 1), buildfuzz's schedule vs identical rebuilds (nix --check / guix
    --rounds) and vs varying only the CPU count (reprotest num_cpus), per scenario.
    Target: every parallelism scenario found within 4 builds at worst by buildfuzz.

Nothing here asserts on time: it prints ratios of things measured side by side in one
run, repetitions interleaved, medians reported. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import bench_hash  # noqa: E402  (beside this file)

from fuzzer import structs  # noqa: E402
from fuzzer.campaign import run_campaign  # noqa: E402
from fuzzer.config import FuzzConfig  # noqa: E402
from fuzzer.execute.guard import Guard  # noqa: E402
from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.execute.run import RunRecord, RunRequest  # noqa: E402
from fuzzer.execute.workspace import Workspace  # noqa: E402
from fuzzer.compare import bookkeeping  # noqa: E402
from fuzzer.model import available_cpus  # noqa: E402
from fuzzer.observe import ALGORITHM, Manifest, take_manifest  # noqa: E402
from fuzzer.plan import Perturbation, format_cpus  # noqa: E402
from fuzzer.scenarios import Scenario, find_scenarios  # noqa: E402

MiB = 1 << 20
OVERHEAD_TARGET = 1.05
DETECT_TARGET = 4
DETECT_CAP = 12
SMOKE_SCENARIO = "hashseed"  # every rebuild differs: each method finds it by build 2, a short (c)
PARALLELISM_KINDS = ("race", "order", "parallelism-level")


# ------------------------------------------------------------------ printing


def table(header: list[str], rows: list[list[str]], indent: str = "  ", align: str = "") -> None:
    """`align`: one l/r per column; by default the first column left, the others right."""
    rows = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    align = align or "l" + "r" * (len(header) - 1)
    for n, row in enumerate(rows):
        cells = [c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(row, widths, align)]
        print(indent + "  ".join(cells).rstrip())
        if n == 0:
            print(indent + "  ".join("-" * w for w in widths))
    sys.stdout.flush()


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def secs(values: list[float]) -> str:
    return " ".join(f"{v:.3f}" for v in values)


def tool_version(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip() if out else "?"
    except (OSError, subprocess.SubprocessError):
        return "not found"


def machine_facts() -> None:
    cpus = available_cpus()
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    print("machine")
    table(["fact", "value"], [
        ["nproc (affinity)", f"{len(cpus)} (cpus {format_cpus(cpus)}; os.cpu_count {os.cpu_count()})"],
        ["cpu", model],
        ["python", f"{platform.python_version()} ({sys.executable})"],
        ["kernel", platform.release()],
        ["load average", " ".join(f"{x:.2f}" for x in os.getloadavg())],
        ["make", tool_version(["make", "--version"])],
        ["gcc", tool_version(["gcc", "--version"])],
        ["sha256sum", tool_version(["sha256sum", "--version"])],
        ["manifest digests", ALGORITHM],
    ], align="ll")
    print()


# ------------------------------------------------------------------ (a) overhead


def write_generated_c(root: Path, files: int = 20) -> None:
    """Fallback when scenarios/clean-c is missing: ~20 C files, a library and a program."""
    (root / "src").mkdir(parents=True)
    objs = " ".join(f"obj/f{i}.o" for i in range(files))
    (root / "Makefile").write_text(
        f"all: bin/prog\nbin/prog: obj/main.o lib/libgen.a\n\tmkdir -p bin && gcc -o $@ $^\n"
        f"lib/libgen.a: {objs}\n\tmkdir -p lib && ar rcD $@ {objs}\n"
        "obj/%.o: src/%.c src/common.h\n\tmkdir -p obj && gcc -O2 -c $< -o $@\n"
    )
    (root / "src" / "common.h").write_text("#include <stdio.h>\n#include <string.h>\n")
    for i in range(files):
        body = "".join(f"  for (int k = 0; k < n; k++) s += (s << {j % 7}) ^ k * {i + j};\n" for j in range(40))
        (root / "src" / f"f{i}.c").write_text(f'#include "common.h"\nlong f{i}(long n) {{ long s = 0;\n{body}  return s; }}\n')
    (root / "src" / "main.c").write_text('#include "common.h"\nint main(void) { puts("ok"); return 0; }\n')


def bench_overhead(reps: int, tmp: Path) -> None:
    source = REPO / "scenarios" / "clean-c"
    if (source / "Makefile").is_file():
        what = f"scenarios/clean-c ({sum(1 for p in source.rglob('*') if p.is_file())} files)"
    else:
        source = tmp / "generated" / "clean-c"
        write_generated_c(source)
        what = "a GENERATED 20-file C project (scenarios/clean-c does not exist yet)"
    cpus = available_cpus()
    jobs = 2
    print(f"(a) fuzzer overhead on {what}: make -j{jobs}, all CPUs ({format_cpus(cpus)}), no jitter, no trace")
    print("    both sides include the fresh copy (rmtree of the last tree + shutil.copytree, same tree,")
    print("    fixed path, same path length); one warm-up pair untimed; the guard process is started")
    print("    once per executor (once per campaign), so it is timed separately below.")

    # same length, same depth, same basename: the build path cannot explain a difference
    fuzz_ws = Workspace(source, tmp / "a" / "fuzz" / source.name)
    bare_path = tmp / "a" / "bare" / source.name
    spec = BuildSpec("make -j{jobs}", fuzz_ws, tmp / "a" / "logs")
    bare_log = tmp / "a" / "bare.log"
    perturbation = Perturbation(jobs, cpus)

    fuzz: list[float] = []
    bare: list[float] = []
    bare_copy: list[float] = []
    bare_make: list[float] = []
    manifest_s: list[float] = []
    files = 0

    def run_fuzz(index: int) -> float:
        started = time.perf_counter()
        record = executor.run(RunRequest(index, perturbation))
        elapsed = time.perf_counter() - started
        if not record.ok:
            raise RuntimeError(f"fuzzer build failed: {record.log_tail}")
        return elapsed

    def run_bare() -> tuple[float, float]:
        started = time.perf_counter()
        if os.path.lexists(bare_path):
            shutil.rmtree(bare_path)
        bare_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, bare_path, symlinks=True)
        copied = time.perf_counter()
        with open(bare_log, "wb") as log:
            proc = subprocess.run(["make", f"-j{jobs}"], cwd=bare_path, stdout=log, stderr=subprocess.STDOUT)
        done = time.perf_counter()
        if proc.returncode != 0:
            raise RuntimeError(f"bare build failed ({proc.returncode}), see {bare_log}")
        return copied - started, done - copied

    with LocalExecutor(spec) as executor:
        run_fuzz(0)  # warm-up: starts the guard, warms gcc and the page cache
        run_bare()
        for rep in range(reps):
            order = ("fuzz", "bare") if rep % 2 == 0 else ("bare", "fuzz")
            for side in order:
                if side == "fuzz":
                    fuzz.append(run_fuzz(rep + 1))
                    # the manifest's share, re-measured on the tree the run just left
                    started = time.perf_counter()
                    manifest = take_manifest(fuzz_ws.path)
                    manifest_s.append(time.perf_counter() - started)
                    files = len(manifest.entries)
                else:
                    copy_s, make_s = run_bare()
                    bare_copy.append(copy_s)
                    bare_make.append(make_s)
                    bare.append(copy_s + make_s)
    fuzz_ws.remove()

    guard_s = []
    for _ in range(3):
        started = time.perf_counter()
        with Guard() as guard:
            guard.start(["/bin/true"], cwd=str(tmp), env=dict(os.environ), cpus=None, log_path=str(tmp / "a" / "g.log"))
            guard.wait(None)
        guard_s.append(time.perf_counter() - started)

    ratio = median(fuzz) / median(bare)
    print(f"    {reps} interleaved repetitions each (ABBA order)")
    table(["run", "median s", "all reps (s)"], [
        ["buildfuzz LocalExecutor.run", f"{median(fuzz):.3f}", secs(fuzz)],
        ["bare copytree + make", f"{median(bare):.3f}", secs(bare)],
        ["  of which copytree", f"{median(bare_copy):.3f}", secs(bare_copy)],
        ["  of which make", f"{median(bare_make):.3f}", secs(bare_make)],
        [f"take_manifest alone ({files} files)", f"{median(manifest_s):.3f}", secs(manifest_s)],
        ["guard start+stop (once per campaign)", f"{median(guard_s):.3f}", secs(guard_s)],
    ])
    verdict = "ok" if ratio <= OVERHEAD_TARGET else "OVER"
    print(f"    ratio buildfuzz / bare (medians): {ratio:.3f}  (target <= {OVERHEAD_TARGET})  {verdict}")
    print(f"    absolute overhead per run: {median(fuzz) - median(bare):+.3f} s")
    print()


# ------------------------------------------------------------------ (b) hashing


def bench_hashing(size_mib: int, reps: int, tmp: Path) -> None:
    root = tmp / "b" / "tree"
    root.mkdir(parents=True)
    count, nbytes, buckets = bench_hash.generate_tree(root, size_mib * MiB)
    print(f"(b) hashing throughput (bench_hash.py): {count} files, {nbytes / MiB:.0f} MiB, warm cache, "
          f"{reps} repetition(s), order rotated")
    measured, note = bench_hash.methods(root)
    ratio = bench_hash.report(bench_hash.measure(measured, reps), nbytes)
    shutil.rmtree(root)
    if note:
        print(f"    {note}")
    verdict = "ok" if ratio >= bench_hash.TARGET else "UNDER"
    print(f"    ratio take_manifest / cat (throughput): {ratio:.2f}  (target >= {bench_hash.TARGET})  {verdict}")
    print()


# ------------------------------------------------------------------ (c) detection


@dataclass
class Trial:
    builds: int | None  # builds until detection, the reference counted as 1; None: not found
    seconds: float
    how: str = ""  # the perturbation (and outcome) of the build that showed it
    error: str = ""


def _outcome(record: RunRecord, select: Callable[[Manifest], Manifest]) -> str:
    if not record.ok or record.manifest is None:
        return "failed"
    return select(record.manifest).digest()


def _selector(scenario: Scenario) -> Callable[[Manifest], Manifest]:
    """What decides a campaign's verdict: drop ignored files and, unless they count, the build
    systems' bookkeeping (a campaign settles it as the reference's: the same digests), then
    keep the artifacts."""
    ignore = scenario.ignore + (() if scenario.counts_bookkeeping else bookkeeping.GLOBS)
    return lambda m: m.select((), ignore).select(scenario.artifacts)


def detect_buildfuzz(scenario: Scenario, seed: int, tmp: Path) -> Trial:
    store = Path(tempfile.mkdtemp(prefix=f"c-{scenario.name}-", dir=tmp))
    started = time.perf_counter()
    try:
        config = FuzzConfig(
            source=scenario.path, command=scenario.command, store=store, runs=DETECT_CAP, seed=seed,
            artifacts=scenario.artifacts, ignore=scenario.ignore, localize=False, stop_on_first=True,
            **({"jobs": scenario.jobs} if scenario.jobs else {}),
        )
        outcome = run_campaign(config)
    except Exception as e:  # a scenario being edited concurrently must not end the benchmark
        return Trial(None, time.perf_counter() - started, error=f"{type(e).__name__}: {e}")
    finally:
        shutil.rmtree(store, ignore_errors=True)
    elapsed = time.perf_counter() - started
    report = outcome.report
    if outcome.exit_code == 3:
        return Trial(None, elapsed, error="reference build failed")
    if report.verdict != "unreproducible":
        return Trial(None, elapsed)
    last = report.runs[-1]
    p = structs.convert(last.perturbation, Perturbation)
    result = "failed" if last.status != "ok" else f"group {last.group}"
    return Trial(len(report.runs), elapsed, f"#{len(report.runs)} {p.describe()} → {result}")


def detect_baseline(scenario: Scenario, plan: list[Perturbation], tmp: Path, label: str) -> Trial:
    """Drive the executor with a fixed list; detected when an outcome (selected digest, or
    'failed') differs from an earlier one — the design's definition of unreproducible."""
    workspace = Workspace(scenario.path.resolve(), tmp / "c" / label / scenario.path.name)
    spec = BuildSpec(scenario.command, workspace, tmp / "c" / label / "logs")
    select = _selector(scenario)
    seen: set[str] = set()
    started = time.perf_counter()
    try:
        with LocalExecutor(spec) as executor:
            for index, perturbation in enumerate(plan):
                outcome = _outcome(executor.run(RunRequest(index, perturbation)), select)
                seen.add(outcome)
                if len(seen) > 1:
                    result = "failed" if outcome == "failed" else "new digest"
                    return Trial(index + 1, time.perf_counter() - started,
                                 f"#{index + 1} {perturbation.describe()} → {result}")
    except Exception as e:
        return Trial(None, time.perf_counter() - started, error=f"{type(e).__name__}: {e}")
    finally:
        workspace.remove()
        shutil.rmtree(spec.logs, ignore_errors=True)
    return Trial(None, time.perf_counter() - started)


def identical_plan(cpus: tuple[int, ...]) -> list[Perturbation]:
    """nix --check / guix build --rounds: the same settings every time, -j = nproc."""
    return [Perturbation(len(cpus), cpus)] * DETECT_CAP


def num_cpus_plan(cpus: tuple[int, ...]) -> list[Perturbation]:
    """reprotest's num_cpus: all CPUs / one CPU alternately, fixed -j = nproc."""
    plan = []
    for i in range(DETECT_CAP):
        plan.append(Perturbation(len(cpus), cpus if i % 2 == 0 else (cpus[(i // 2) % len(cpus)],)))
    return plan


def summarize(trials: list[Trial]) -> tuple[str, str, str, str]:
    """median, worst, found/total, median seconds to detection (found trials only)."""
    found = [t.builds for t in trials if t.builds is not None]
    errors = [t for t in trials if t.error]
    n = len(trials)
    if len(found) == n:
        builds = sorted(found)
        med, worst = f"{statistics.median(builds):g}", str(builds[-1])
    else:
        # a trial not found within the cap counts as > cap: the median is > cap when half miss
        key = sorted([b for b in found] + [DETECT_CAP + 1] * (n - len(found)))
        m = statistics.median_low(key)
        med = f"{m}" if m <= DETECT_CAP else f">{DETECT_CAP}"
        worst = "not found"
    rate = f"{len(found)}/{n}" + (f" ({len(errors)} err)" if errors else "")
    s = median([t.seconds for t in trials if t.builds is not None])
    return med, worst, rate, ("-" if s != s else f"{s:.1f}")


def bench_detection(seeds: list[int], tmp: Path, names: list[str] | None = None) -> None:
    scenarios_dir = REPO / "scenarios"
    present = sorted(p.name for p in scenarios_dir.iterdir() if p.is_dir()) if scenarios_dir.is_dir() else []
    scenarios: list[Scenario] = []
    skipped: list[str] = []
    for name in present:
        try:
            scenarios += find_scenarios([scenarios_dir / name])
        except Exception as e:  # mid-edit or not a scenario yet
            skipped.append(f"{name} ({type(e).__name__}: {str(e)[:80]})")
    chosen = [s for s in scenarios if s.expect.verdict == "unreproducible" and (not names or s.name in names)]
    cpus = available_cpus()
    print("(c) detection efficiency: builds until the first divergence or perturbed failure")
    print(f"    (reference = build 1), cap {DETECT_CAP} builds, {len(seeds)} seed(s)/trial(s) ({seeds[0]}..{seeds[-1]})"
          + ("; one trial: 'worst' means nothing" if len(seeds) == 1 else ""))
    print(f"    scenarios present: {', '.join(present) or 'none'}")
    if skipped:
        print(f"    not loadable (skipped): {'; '.join(skipped)}")
    print(f"    measured (verdict = unreproducible): {', '.join(s.name for s in chosen) or 'none'}")
    print(f"    buildfuzz   : run_campaign(stop_on_first, no localize, runs={DETECT_CAP}), seed = trial,")
    print("                  jobs {scenario [run].jobs or the default 1-8}, all axes")
    print(f"    identical   : -j{len(cpus)}, all CPUs, no jitter, repeated (nix --check / guix --rounds)")
    print(f"    num_cpus    : -j{len(cpus)}, all CPUs / one CPU alternately (reprotest num_cpus)")
    print("    trials of the three methods are interleaved (seed 1: buildfuzz, identical, num_cpus; seed 2: ...)")
    if not chosen:
        print("    nothing to measure\n")
        return

    methods: dict[str, Callable[[Scenario, int], Trial]] = {
        "buildfuzz": lambda s, seed: detect_buildfuzz(s, seed, tmp),
        "identical": lambda s, seed: detect_baseline(s, identical_plan(cpus), tmp, "identical"),
        "num_cpus": lambda s, seed: detect_baseline(s, num_cpus_plan(cpus), tmp, "numcpus"),
    }
    results: dict[str, dict[str, list[Trial]]] = {}
    started_all = time.perf_counter()
    for scenario in chosen:
        started = time.perf_counter()
        results[scenario.name] = {m: [] for m in methods}
        for seed in seeds:
            for name, method in methods.items():
                results[scenario.name][name].append(method(scenario, seed))
        bf = results[scenario.name]["buildfuzz"]
        print(f"    ... {scenario.name}: {time.perf_counter() - started:.0f} s "
              f"(buildfuzz builds: {' '.join(str(t.builds or '-') for t in bf)})", flush=True)
    print(f"    (c) took {time.perf_counter() - started_all:.0f} s")

    rows = []
    misses = []
    short = {"buildfuzz": "bf", "identical": "ident", "num_cpus": "ncpu"}
    for scenario in chosen:
        kind = scenario.expect.kind or "?"
        klass = "parallelism" if kind in PARALLELISM_KINDS else "intrinsic"
        if kind == "parallelism-level":
            kind = f"level:{scenario.expect.axis or '?'}"
        row = [scenario.name, kind, klass]
        for name in methods:
            row += list(summarize(results[scenario.name][name]))
        bf = results[scenario.name]["buildfuzz"]
        if klass == "parallelism":
            ok = all(t.builds is not None and t.builds <= DETECT_TARGET for t in bf)
            row.append("ok" if ok else "MISS")
            if not ok:
                misses.append(scenario.name)
        else:
            row.append("-")
        rows.append(row)
    print()
    print("    builds to detection (bf = buildfuzz, ident = identical rebuilds, ncpu = num_cpus):")
    print("    med / worst over the trials ('>12' / 'not found': not detected within the cap);")
    print("    found = trials detected; s = median wall seconds to detection over found trials")
    print("    (includes the reference build, copies and hashing)")
    header = ["scenario", "expected kind", "class"]
    for name in methods:
        header += [f"{short[name]} med", "worst", "found", "s"]
    header.append(f"bf<={DETECT_TARGET}")
    table(header, rows, align="lll" + "r" * (len(header) - 3))
    n_par = sum(1 for r in rows if r[-1] != "-")
    print(f"    parallelism scenarios found by buildfuzz within {DETECT_TARGET} builds at worst: "
          f"{n_par - len(misses)}/{n_par}" + (f"  (MISS: {', '.join(misses)})" if misses else ""))

    print()
    print("    which build found it (buildfuzz: trials per detecting build index and perturbation, jitter seed omitted)")
    for scenario in chosen:
        bf = results[scenario.name]["buildfuzz"]
        counts: dict[str, int] = {}
        for t in bf:
            # the jitter seed differs per campaign seed: group by the rest of the perturbation
            how = re.sub(r"/seed=\d+", "", t.how.split(" → ")[0])
            key = how or ("error: " + t.error if t.error else "not found")
            counts[key] = counts.get(key, 0) + 1
        print(f"    {scenario.name}:")
        for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"      {n:>2}x  {key}")
    errors = [(s, m, t.error) for s, by in results.items() for m, ts in by.items() for t in ts if t.error]
    if errors:
        print("    errors:")
        for s, m, e in errors[:20]:
            print(f"      {s} / {m}: {e[:160]}")
    print()


# ------------------------------------------------------------------ main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer reps and seeds, 200 MiB tree (< 3 min)")
    parser.add_argument("--only", action="append", choices=["a", "b", "c"], help="run only this benchmark")
    parser.add_argument("--size-mib", type=int, help="hashing tree size (default 1024, --quick 200)")
    parser.add_argument("--reps", type=int, help="repetitions for (a) (default 9, --quick 3)")
    parser.add_argument("--hash-reps", type=int, help="repetitions for (b) (default 3)")
    parser.add_argument("--seeds", type=int, help="campaign seeds 1..N for (c) (default 10, --quick 1)")
    parser.add_argument("--scenario", action="append", help="(c) on this scenario only (repeatable)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"one rep of (a), a 16 MiB tree for (b), (c) on {SMOKE_SCENARIO} with one seed: CI")
    args = parser.parse_args()
    only = set(args.only or ["a", "b", "c"])
    brief = args.quick or args.smoke
    reps = args.reps or (1 if args.smoke else 3 if args.quick else 9)
    hash_reps = args.hash_reps or (1 if args.smoke else 3)
    size = args.size_mib or (16 if args.smoke else 200 if args.quick else 1024)
    seeds = list(range(1, (args.seeds or (1 if brief else 10)) + 1))
    scenarios = args.scenario or ([SMOKE_SCENARIO] if args.smoke else None)

    started = time.perf_counter()
    machine_facts()
    with tempfile.TemporaryDirectory(prefix="bench-core-") as tmp_dir:
        tmp = Path(tmp_dir)
        if "a" in only:
            bench_overhead(reps, tmp)
        if "b" in only:
            bench_hashing(size, hash_reps, tmp)
        if "c" in only:
            bench_detection(seeds, tmp, scenarios)
    print(f"total {time.perf_counter() - started:.0f} s; load average now "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
