"""Benchmark the step audit (`--check-steps`): replay throughput, store growth, analysis time.

    python bench/bench_audit.py            # 10,000-step analysis, 16 busy and 16 short steps replayed (~8 min)
    python bench/bench_audit.py --smoke    # 100-step analysis, 2 steps of each (< 1 min; CI)
    python bench/bench_audit.py --steps 6 --rounds 1 --analysis-steps 300   # on a busy machine

(a) Throughput: a make build of K Python steps, each busy on the CPU for about 0.3 s (and
one of K short steps, about 0.02 s, whose replays mostly wait for the clock), is traced
once; then every step is replayed alone REPLAYS times through the audit's own machinery
(plan, writer targets, replay slots), with one replay at a time and with one per CPU,
and, as the ceiling this machine gives right now, the same replays' commands run bare
(subprocess, one per CPU at once, no guard, no namespace, no spread over the clock),
side by side (ABBA in the full mode). Throughput is the CPU-seconds the replays used
(RUSAGE_CHILDREN, taken after the slots' guards are reaped) per wall-second; target
>= 0.8 x the CPU count with one replay per CPU on the busy steps. On a shared machine
read the ratio to the bare row: the neighbours slow both. The audit's own CPU (its guards,
namespaces, restores) counts in its throughput too, so the rows end with that cost per
replay: the audit's CPU over bare.

(b) Store growth: the bytes the store's database and the JSON report's audit section
grow by per audited step (every step of (c)'s trace saved as audited).

(c) Analysis: a generated ninja build of N cheap steps in chains (`ninja_chain`) traced
once; then loading its trace and planning the audit of every step upstream of the final
file, timed in this process; target <= 10 s at 10,000 steps.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ThreadPoolExecutor
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzzer.model import AuditedStep, available_cpus  # noqa: E402
from fuzzer.execute.replay_slots import ReplaySlots, in_slots  # noqa: E402
from fuzzer.execute.step_replay import REPLAYS, Variation  # noqa: E402
from fuzzer.explain import audit  # noqa: E402
from fuzzer.explain.writer import ReplayTargets  # noqa: E402
from fuzzer.store import Store  # noqa: E402
from fuzzer.tools import strace  # noqa: E402

TARGET_ANALYSIS_S = 10.0
TARGET_THROUGHPUT = 0.8  # x CPUs
BUSY = "import time\nend = time.process_time() + {s}\nwhile time.process_time() < end: pass\nprint('{i}')\n"


def traced(root: Path, build: list[str]) -> Path:
    trace = root.with_suffix(".trace")
    subprocess.run(strace.wrap(build, str(trace)), cwd=root, check=True, stdout=subprocess.DEVNULL)
    return trace


def ninja_chain(root: Path, n: int) -> None:
    """N ninja steps, NNPACK-like: chains of generators (each reads the one before), every
    tenth chain head reading a source, and a final step reading the last of each chain."""
    root.mkdir(parents=True)
    lines = ["rule gen", "  command = sed s/x/y/ $in > $out", "rule src", "  command = cp $in $out"]
    ends = []
    for i in range(n - 1):
        if i % 10 == 0:
            (root / f"s{i}").write_text(f"x {i}\n")
            lines.append(f"build o{i}: src s{i}")
        else:
            lines.append(f"build o{i}: gen o{i - 1}")
        if i % 10 == 9 or i == n - 2:
            ends.append(f"o{i}")
    lines.append(f"build final: gen {' '.join(ends)}")
    (root / "build.ninja").write_text("\n".join(lines) + "\n")


def busy_build(root: Path, steps: int, seconds: float) -> None:
    root.mkdir(parents=True)
    for i in range(steps):
        (root / f"busy{i}.py").write_text(BUSY.replace("{i}", str(i)).replace("{s}", str(seconds)))
    rules = [f"all: {' '.join(f'out{i}' for i in range(steps))}\n"]
    rules += [f"out{i}: busy{i}.py\n\tpython3 busy{i}.py > out{i}\n" for i in range(steps)]
    (root / "Makefile").write_text("".join(rules))


def planned(root: Path, trace_path: Path) -> tuple[list, ReplayTargets]:
    from fuzzer.trace.steps import load_trace

    trace = load_trace(trace_path, str(root))
    plan = audit.plan(trace, {p for s in trace.steps for p in s.outputs}, 1.0, (), {})
    assert not plan.unreplayable, plan.unreplayable
    return list(plan.chosen), ReplayTargets(trace, trace, 1)


def replay_all(root: Path, trace_path: Path, at_once: int, logs: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, replays at once) for every step of the traced build replayed REPLAYS times."""
    chosen, targets = planned(root, trace_path)
    cpus = tuple(available_cpus())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with ReplaySlots(root, at_once, logs) as slots:
        def replay(item, k: int) -> bool:
            with slots.replayer(k, targets.of(item.candidate).call, cpus) as replayer:
                return replayer.replay(Variation("plain"), REPLAYS).stable

        assert all(in_slots(chosen, range(slots.count), replay)), "a busy step varied or failed"
        count = slots.at_once
    return *_spent(before, started), count


def bare_all(root: Path, trace_path: Path, at_once: int) -> tuple[float, float]:
    """(wall s, CPU s) for the same replays' commands run bare, `at_once` at a time."""
    chosen, targets = planned(root, trace_path)
    calls = [targets.of(item.candidate).call for item in chosen for _ in range(REPLAYS)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with ThreadPoolExecutor(at_once) as pool:
        # a session of its own, as the guard starts every replay: with autogroup scheduling a
        # session is one group sharing the CPUs with the neighbours' sessions
        codes = list(pool.map(lambda call: subprocess.run(call.argv, cwd=root / call.cwd, env=call.env,
                                                          stdout=subprocess.DEVNULL, start_new_session=True
                                                          ).returncode, calls))
    assert not any(codes), codes
    return _spent(before, started)


def _spent(before, started: float) -> tuple[float, float]:
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_throughput(tmp: Path, steps: int, rounds: int, busy_s: float) -> None:
    ncpus = len(available_cpus())
    print(f"(a) throughput: {steps} steps, {REPLAYS} replays each, {ncpus} CPUs; target >= "
          f"{TARGET_THROUGHPUT * ncpus:.1f} CPU-s per wall-s with one replay per CPU on the busy steps")
    for name, seconds in (("busy", busy_s), ("short", 0.02)):
        root = tmp / name
        busy_build(root, steps, seconds)
        trace_path = traced(root, ["make", "-j1", "-s"])  # the replays are measured, not this build
        print(f"  {name} steps (~{seconds} s CPU each):")
        _throughput_rows(root, trace_path, tmp / "logs", ncpus, rounds, steps * REPLAYS)


def _throughput_rows(root: Path, trace_path: Path, logs: Path, ncpus: int, rounds: int, replays: int) -> None:
    order = [1, ncpus, ncpus, 1] * rounds if rounds > 1 else [1, ncpus]
    results: dict[str, list[tuple[float, float]]] = {}
    for n in order:
        wall, cpu, count = replay_all(root, trace_path, n, logs)
        results.setdefault(f"audit, {count} at once", []).append((wall, cpu))
        results.setdefault(f"bare,  {n} at once", []).append(bare_all(root, trace_path, n))
    medians = {label: tuple(sorted(column)[len(rows) // 2] for column in zip(*rows)) for label, rows in results.items()}
    for label, (wall, cpu) in sorted(medians.items()):
        print(f"    {label:<17} wall {wall:6.2f} s  CPU {cpu:6.2f} s  throughput {cpu / wall:4.2f} CPU-s/wall-s "
              f"({cpu / wall / ncpus:.2f} x CPUs)")
    for n in sorted(set(order)):
        if f"audit, {n} at once" in medians:  # the audit's own CPU counts as throughput too: its cost per replay
            (wall, cpu), (bare_wall, bare_cpu) = medians[f"audit, {n} at once"], medians[f"bare,  {n} at once"]
            print(f"    audit / bare, {n} at once: throughput {cpu / wall / (bare_cpu / bare_wall):.2f}, wall "
                  f"{wall / bare_wall:.2f}; the audit's CPU over bare: {(cpu - bare_cpu) / replays * 1000:.1f} ms "
                  f"per replay (slots: copies, guards, namespaces; restores)")
    if not any(label.startswith(f"audit, {ncpus} ") for label in results):
        print("    (one replay at a time only: no mount namespaces here)")


def bench_analysis_and_store(tmp: Path, n: int) -> None:
    root = tmp / f"chain{n}"
    ninja_chain(root, n)
    trace_path = traced(root, ["ninja", "-j2"])
    from fuzzer.trace.steps import load_trace

    started = time.perf_counter()
    trace = load_trace(trace_path, str(root))
    loaded = time.perf_counter()
    plan = audit.plan(trace, {"final"}, 1.0, (), {})
    planned = time.perf_counter()
    print(f"(c) analysis: {len(trace.steps)} steps ({len(trace.processes)} processes): load {loaded - started:.2f} s, "
          f"audit plan {planned - loaded:.2f} s ({len(plan.chosen)} to replay, {len(plan.unreplayable)} not "
          f"replayable); total {planned - started:.2f} s (target <= {TARGET_ANALYSIS_S:.0f} s at 10,000 steps)")
    store = Store(tmp / "store", create=True)
    size = lambda: sum(p.stat().st_size for p in (tmp / "store").glob("buildfuzz.sqlite*"))  # noqa: E731
    empty = size()
    when = "2026-01-01T00:00:00.000000+00:00"
    store.save_audits(str(root), "make", 1, [(a.identity, when, "stable") for a in plan.chosen])
    grown = size() - empty
    store.close()
    detail = "5/5 replays alone gave the traced build's bytes: any variation left is below 46% of replays (95%)"
    rows = [AuditedStep(a.identity, a.step.command, a.step.cwd, list(a.candidate.outputs), "stable",
                        detail, 5, 0.1, when, when, f"cd . && {a.step.command}")
            for a in plan.chosen]
    report = len(json.dumps(msgspec.to_builtins(rows)))
    per = max(len(plan.chosen), 1)
    print(f"(b) store growth: {grown / per:.0f} bytes per audited step in the database, {report / per:.0f} bytes "
          f"per step in the JSON report ({len(plan.chosen)} steps)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one round (CI)")
    parser.add_argument("--steps", type=int, help="steps of each kind replayed in (a) (default 16; --smoke 2)")
    parser.add_argument("--rounds", type=int, help="ABBA rounds of (a) (default 2; --smoke 1: AB)")
    parser.add_argument("--analysis-steps", type=int, help="steps of (b) and (c)'s build (default 10,000; --smoke 100)")
    args = parser.parse_args()
    reason = strace.STRACE.problem()
    if reason:
        print(f"cannot benchmark: {reason}", file=sys.stderr)
        return 2
    print(f"load average {os.getloadavg()[0]:.2f} on {len(available_cpus())} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp_dir:
        tmp = Path(tmp_dir)
        bench_throughput(tmp, args.steps or (2 if args.smoke else 16), args.rounds or (1 if args.smoke else 2),
                         0.1 if args.smoke else 0.3)
        bench_analysis_and_store(tmp, args.analysis_steps or (100 if args.smoke else 10_000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
