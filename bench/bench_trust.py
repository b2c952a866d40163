"""Findings you can trust: hazards on clean builds, localization cost, detection of races
without sleeps. Everything is measured in one run, on this machine, as counts and ratios.

    python bench/bench_trust.py                 # every scenario, seeds 1-3
    python bench/bench_trust.py --seeds 1 --only clean-multiline-recipes --only mkdir-race

(1) Per scenario and seed, a full campaign (`buildfuzz scenarios check`): whether every
    expectation held, the hazards reported (target: 0 on every reproducible scenario), and
    the localization time as a ratio to the reference build's time.
(2) Builds to first detection on the race scenarios that have no sleeps, with the same
    campaign engine (bench_core's `detect_buildfuzz`), over the given seeds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench_core import REPO, detect_buildfuzz, machine_facts, summarize, table

from fuzzer.scenarios import check_scenario, find_scenarios

NO_SLEEP_RACES = ("parser-header-race", "mkdir-race", "multi-target-recipe", "same-object-two-flags")
SMOKE_CLEAN, SMOKE_RACE = "clean-c", "mkdir-race"  # a clean build (its hazards must be 0), a race for (2)
SMOKE_RUNS = 4


def bench_findings(scenarios, seeds: list[int], runs: int | None = None) -> None:
    print("\n(1) findings per scenario and seed: expectations, hazards, localization / one build")
    rows = []
    for scenario in scenarios:
        for seed in seeds:
            score = check_scenario(scenario, runs=runs, seed=seed, progress=lambda _: None)
            report = score.report
            if report is None:
                rows.append([scenario.name, str(seed), "ERROR", "-", "-", score.error[:60]])
                continue
            build = report.runs[0].wall_s or float("nan")
            spent = sum(v for k, v in report.phases.items() if k in ("localize", "hazards"))
            failed = [c.name for c in score.checks if c.status == "FAIL"]
            rows.append([scenario.name, str(seed), "pass" if score.passed else "FAIL " + ",".join(failed),
                         str(len(report.hazards)), f"{spent / build:.1f}x" if spent else "-",
                         report.culprits[0].kind if report.culprits else "-"])
    table(["scenario", "seed", "expectations", "hazards", "localize/build", "top kind"], rows)
    clean = [r for r in rows if r[3] not in ("-", "0") and _expects_reproducible(scenarios, r[0])]
    print(f"  hazards on reproducible scenarios: {'none' if not clean else clean}")


def _expects_reproducible(scenarios, name: str) -> bool:
    return any(s.name == name and s.expect.verdict == "reproducible" for s in scenarios)


def bench_detection(scenarios, seeds: list[int], tmp: Path) -> None:
    print("\n(2) builds to first detection, races without sleeps (reference counted as build 1)")
    rows = []
    for scenario in scenarios:
        if scenario.name not in NO_SLEEP_RACES:
            continue
        trials = [detect_buildfuzz(scenario, seed, tmp) for seed in seeds]
        med, worst, rate, secs = summarize(trials)
        rows.append([scenario.name, med, worst, rate, secs])
    table(["scenario", "median", "worst", "found", "median s"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="*", default=[1, 2, 3])
    parser.add_argument("--only", action="append", default=[], help="scenario name (repeatable)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"seed 1: (1) on {SMOKE_CLEAN} with {SMOKE_RUNS} runs, (2) on {SMOKE_RACE}: CI")
    args = parser.parse_args()
    machine_facts()
    scenarios = find_scenarios([REPO / "scenarios"])
    if args.only:
        scenarios = [s for s in scenarios if s.name in args.only]
    with tempfile.TemporaryDirectory(prefix="bench-trust-") as tmp:
        if args.smoke:
            bench_findings([s for s in scenarios if s.name == SMOKE_CLEAN], [1], SMOKE_RUNS)
            bench_detection([s for s in scenarios if s.name == SMOKE_RACE], [1], Path(tmp))
        else:
            bench_findings(scenarios, args.seeds)
            bench_detection(scenarios, args.seeds, Path(tmp))
    print(f"\nload average at the end: {statistics.fmean(__import__('os').getloadavg()):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
