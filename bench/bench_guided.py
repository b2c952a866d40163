"""Find more with fewer builds: hazard-guided schedules against the old schedule and
against plain rebuilds, on race scenarios without sleeps. One run, side by side.

    python bench/bench_guided.py                      # 10 seeds
    python bench/bench_guided.py --seeds 1 2 3 --only near-miss-header
    python bench/bench_guided.py --smoke              # (1) on mkdir-race with seed 1, (3) with 2 builds: CI

(1) Builds to first detection (the reference counted as build 1, at most 12), per
    scenario over the seeds, for three ways of rebuilding:
      guided    buildfuzz as shipped: run 1 traced, then targeted holds, then the schedule
      schedule  buildfuzz's schedule without targeted runs (--axes jobs,cpus,jitter)
      plain     identical rebuilds at -j(nproc), all CPUs (nix --check, guix --rounds)
    Targets: guided median <= 4 and worst <= 12 on every scenario.
(2) Campaigns of 10 runs that do not stop at the first divergence (a confirmation needs
    the targets' control run too), seeds 1-3: every confirmed hazard's replay command,
    run 3 times, and how often it reproduced.
(3) The hold mechanism on a step that lives ~1 ms: how often holding it flips a
    missing-dependency race, against the jitter engine at full intensity, 20 builds each.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_core import REPO, Trial, detect_baseline, identical_plan, machine_facts, summarize, table

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer import structs
from fuzzer.plan import Perturbation
from fuzzer.scenarios import find_scenarios

RACES = ("near-miss-header", "parser-header-race", "mkdir-race", "multi-target-recipe", "same-object-two-flags")
CAP = 12
REPLAYS = 3
SMOKE_SCENARIO = "mkdir-race"


def detect(scenario, seed: int, axes: tuple[str, ...] | None, tmp: Path, stop: bool = True,
           runs: int = CAP) -> tuple[Trial, list[str]]:
    """Builds until the campaign first diverged or failed; the confirmed hazards' replays."""
    store = Path(tempfile.mkdtemp(prefix=f"g-{scenario.name}-", dir=tmp))
    started = time.perf_counter()
    config = FuzzConfig(source=scenario.path, command=scenario.command, store=store, runs=runs, seed=seed,
                        artifacts=scenario.artifacts, ignore=scenario.ignore, stop_on_first=stop,
                        localize=axes is None, **({"axes": axes} if axes else {}))
    report = run_campaign(config).report
    elapsed = time.perf_counter() - started
    replays = [h.reproduce for h in report.hazards if h.status == "confirmed"]
    if report.verdict != "unreproducible":
        return Trial(None, elapsed), []
    first = next(r for r in report.runs if r.group not in ("A", None) or r.status != "ok")
    p = structs.convert(first.perturbation, Perturbation)
    return Trial(first.index + 1, elapsed, f"#{first.index + 1} {p.describe()}"), [(store, r) for r in replays]


def replay_rate(store: Path, command: str) -> int:
    words = shlex.split(command)[1:]  # drop "buildfuzz": run this checkout's CLI
    hits = 0
    for _ in range(REPLAYS):
        done = subprocess.run([sys.executable, "-m", "fuzzer", *words], capture_output=True, timeout=600)
        hits += done.returncode == 1
    return hits


def bench_detection(scenarios, seeds: list[int], tmp: Path) -> None:
    print("\n(1) builds to first detection (reference = build 1; cap 12)")
    rows = []
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    for scenario in scenarios:
        guided, old, plain = [], [], []
        for seed in seeds:
            guided.append(detect(scenario, seed, None, tmp)[0])
            old.append(detect(scenario, seed, ("jobs", "cpus", "jitter"), tmp)[0])
            plain.append(detect_baseline(scenario, identical_plan(cpus), tmp, f"plain-{seed}"))
        for label, trials in (("guided", guided), ("schedule", old), ("plain", plain)):
            rows.append([scenario.name, label, *summarize(trials)])
    table(["scenario", "rebuilding", "median", "worst", "found", "median s"], rows)


def bench_confirmed(scenarios, seeds: list[int], tmp: Path) -> None:
    replays = []
    print("\n(2) confirmed hazards (10-run campaigns, seeds 1-3): their replay command, 3 tries each")
    for scenario in scenarios:
        for seed in seeds[:3]:
            confirmed = detect(scenario, seed, None, tmp, stop=False, runs=10)[1]
            replays += [(scenario.name, store, command) for store, command in confirmed]
    rows = [[name, f"{replay_rate(store, command)}/{REPLAYS}", command[:90]] for name, store, command in replays[:20]]
    table(["scenario", "reproduced", "replay"], rows or [["-", "-", "no confirmed hazard"]])


def bench_hold(tmp: Path, builds: int = 20) -> None:
    """A 1 ms generator and a compile that forgot to depend on it: how often is the race hit?"""
    from fuzzer import hold
    from fuzzer.execute.local import BuildSpec, LocalExecutor
    from fuzzer.execute.run import RunRequest
    from fuzzer.execute.workspace import Workspace

    print(f"\n(3) holding a 1 ms step vs the jitter engine, {builds} builds each (near-miss-header, -j8)")
    source = REPO / "scenarios" / "near-miss-header"
    sed = ("/bin/sh", "-c", "sed 's/@FEATURES@/fast-path checksums/' config.h.in > config.h")
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    ways = {"jitter 1.0": lambda i: Perturbation(8, cpus, 1.0, i),
            "hold 200 ms": lambda i: Perturbation(8, cpus).with_variation("hold", hold.value(sed, 200))}
    spec = BuildSpec("make -j{jobs}", Workspace(source, tmp / "hold" / "ws"), tmp / "hold" / "logs")
    with LocalExecutor(spec) as executor:
        reference = _app(executor.run(RunRequest(0, Perturbation(1, cpus))))
        hits = {name: sum(_app(executor.run(RunRequest(i + 1, way(i)))) != reference for i in range(builds))
                for name, way in ways.items()}
    table(["mechanism", "race hit"], [[name, f"{n}/{builds}"] for name, n in hits.items()])


def _app(record) -> str:
    return record.manifest.entries["app"].digest if record.ok and record.manifest else "failed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=list(range(1, 11)))
    parser.add_argument("--only", action="append", default=[], help="scenario name (repeatable)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"(1) on {SMOKE_SCENARIO} with seed 1, no (2), (3) with 2 builds a mechanism: CI")
    args = parser.parse_args()
    machine_facts()
    names = [SMOKE_SCENARIO] if args.smoke else args.only or RACES
    scenarios = [s for s in find_scenarios([REPO / "scenarios"]) if s.name in names]
    with tempfile.TemporaryDirectory(prefix="bench-guided-") as tmp:
        bench_detection(scenarios, [1] if args.smoke else args.seeds, Path(tmp))
        if not args.smoke:
            bench_confirmed(scenarios, args.seeds, Path(tmp))
        bench_hold(Path(tmp), 2 if args.smoke else 20)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
