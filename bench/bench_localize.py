"""Localization cost on the real-build shapes of issue 13, as ratios to one build's time.

    python bench/bench_localize.py            # (1) + (2) + (3), about 15 minutes on 2 CPUs
    python bench/bench_localize.py --quick    # (1) only, about 4 minutes

Every campaign runs here, in this one process, one after the other: the ratios compare
localization with a build measured in the same campaign. "One build" is the reference
build (-j1, no jitter: the campaign's slowest schedule); localization is the report's
`localize` phase (tracing, step replays, shrinking).

Expectations, written before any tuning:

(1) Each shape reaches its scenario's [expect] (culprit, kind, stabiliser, 0 hazards):
    configure-tmpnames → help.c, intrinsic, SOURCE_DATE_EPOCH, with ./configure reported
    last as "intrinsic: names of temporary files"; perl-hash-order → m4cache.pl,
    PERL_HASH_SEED; timestamp → buildinfo.c, SOURCE_DATE_EPOCH; joint-seed-slow →
    -m peachc, ASLR + PYTHONHASHSEED (its 5 s step replayed about 23 times). These builds
    take 0.1-5 s, so the ratios are large: two traced builds and replays spread over
    1.2 s each (second-resolution clocks must tick) do not shrink with the build.
(2) The same shapes with one build padded to >= 30 s (deterministic compiles added to
    `all`): configure-tmpnames localizes within 3 builds' time (two traced builds, a
    quick compile replayed, configure's log judged from its diff). joint-seed-slow cannot:
    a joint pair confirmed at 1% takes about 23 replays of its 5 s step (~115 s) on top
    of two traced builds, so about 5 builds' time; it must still name both variables.
(3) With --budget, the report exists when the budget ends: the campaign's wall time is
    at most the budget plus one build, and the report names the culprit.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from bench_core import REPO, machine_facts, table

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.model import Report
from fuzzer.scenarios import Scenario, load_scenario, score

SHAPES = ("configure-tmpnames", "perl-hash-order", "timestamp", "joint-seed-slow")
PADDED = ("configure-tmpnames", "joint-seed-slow")
SMOKE_SHAPE = "timestamp"
PAD_TARGET_S = 30.0  # one -j1 build, padded
RUNS = 3  # intrinsic shapes diverge on the first rebuild: the reference and two more suffice
BUDGET_S = 300.0  # (3): a campaign of padded builds under --budget 5m
NOISE = "intrinsic: names of temporary files"


def campaign(scenario: Scenario, source: Path, tmp: Path, **settings) -> tuple[Report, float]:
    """One campaign as `buildfuzz run` would make it; its report and wall time."""
    store = Path(tempfile.mkdtemp(prefix=f"{scenario.name}-", dir=tmp))
    config = FuzzConfig(source=source, command=scenario.command, store=store, seed=1, artifacts=scenario.artifacts,
                        ignore=scenario.ignore, **({"jobs": scenario.jobs} if scenario.jobs else {}),
                        **{"runs": RUNS, **settings})
    started = time.monotonic()
    try:
        return run_campaign(config).report, time.monotonic() - started
    finally:
        shutil.rmtree(store, ignore_errors=True)


def row(label: str, scenario: Scenario, report: Report, target: str) -> list[str]:
    build = report.runs[0].wall_s
    spent = report.phases.get("localize", 0.0)
    failed = [c.name for c in score(scenario.expect, report) if c.status != "pass"]
    return [label, f"{build:.1f}", f"{spent:.1f}", f"{spent / build:.1f}x", target,
            "pass" if not failed else "FAIL " + ",".join(failed), _noise_place(report), _cut_short(report)]


def _cut_short(report: Report) -> str:
    """What the budget cut short (Report.cut_short) and about how much more would complete it."""
    cut = report.cut_short
    if cut is None:
        return "-"
    counts = [(len(cut.unsearched), "unsearched"), (len(cut.undecided), "undecided"), (cut.short_steps, "short"),
              (cut.unreplayed_steps, "unreplayed"), (cut.unexplained_roots, "unexplained")]
    return ", ".join(f"{n} {what}" for n, what in counts if n) + f"; ~{cut.more_s:.0f} s more"


def _noise_place(report: Report) -> str:
    """Where the known-noise culprit is listed: it must be last."""
    places = [i for i, c in enumerate(report.culprits) if c.evidence.startswith(NOISE)]
    if not places:
        return "-"
    return "last" if places == [len(report.culprits) - 1] else f"#{places[0] + 1} of {len(report.culprits)}"


HEADER = ["shape", "build s", "localize s", "ratio", "expected", "expectations", "noise", "cut short"]


def bench_shapes(tmp: Path, shapes: tuple[str, ...] = SHAPES) -> None:
    print("\n(1) each shape at its own size: localization / one build")
    rows = []
    for name in shapes:
        scenario = load_scenario(REPO / "scenarios" / name)
        report, _ = campaign(scenario, scenario.path, tmp)
        rows.append(row(name, scenario, report, "-"))
        _culprits(report)
    table(HEADER, rows)


def _culprits(report: Report) -> None:
    for c in report.culprits:
        print(f"    [{c.kind}] {c.command[:70]}: {c.evidence.splitlines()[0][:160]}")


def pad_seconds_per_compile(tmp: Path) -> float:
    """What one padding compile takes here, now (the machine is shared: measured, not assumed)."""
    source = write_pad_source(tmp / "calibrate")
    started = time.monotonic()
    subprocess.run(["gcc", "-O2", "-c", str(source), "-o", str(source.with_suffix(".o"))], check=True)
    return time.monotonic() - started


def write_pad_source(directory: Path) -> Path:
    """600 small functions with loops: about 2 s of gcc -O2 on one core, the same bytes every time."""
    directory.mkdir(parents=True, exist_ok=True)
    functions = [f"unsigned pad_{i}(unsigned x) {{ for (unsigned k = 0; k < {i % 13 + 3}u; k++) "
                 f"{{ x = x * {2 * i + 3}u + (x >> {i % 7 + 1}) ^ {i}u; if (x & {1 << (i % 16)}u) x += k * {i}u; }} "
                 f"return x; }}" for i in range(600)]
    path = directory / "pad.c"
    path.write_text("/* padding: deterministic work for the compiler */\n" + "\n".join(functions) + "\n")
    return path


def padded_copy(scenario: Scenario, tmp: Path, compiles: int) -> Path:
    """The scenario with `compiles` deterministic compiles added to `all`."""
    copy = tmp / f"{scenario.name}-padded"
    shutil.copytree(scenario.path, copy)
    write_pad_source(copy)
    objects = " ".join(f"pad{i}.o" for i in range(compiles))
    with open(copy / "Makefile", "a") as makefile:
        makefile.write(f"\n# padding (bench_localize.py): deterministic compiles\nall: {objects}\n"
                       f"{objects}: pad%.o: pad.c\n\tgcc -O2 -DPAD=$* -c pad.c -o $@\n")
    return copy


def bench_padded(tmp: Path, compiles: int) -> None:
    print(f"\n(2) one build padded to >= {PAD_TARGET_S:.0f} s ({compiles} extra compiles): localization / one build")
    targets = {"configure-tmpnames": "<= 3x", "joint-seed-slow": "~5x (115 s of replays)"}
    rows = []
    for name in PADDED:
        scenario = load_scenario(REPO / "scenarios" / name)
        report, _ = campaign(scenario, padded_copy(scenario, tmp, compiles), tmp)
        rows.append(row(name + " (padded)", scenario, report, targets[name]))
        _culprits(report)
    table(HEADER, rows)


def bench_budget(tmp: Path, compiles: int) -> None:
    print(f"\n(3) configure-tmpnames padded, --budget {BUDGET_S:.0f}s --runs 100: does the report exist in time?")
    scenario = load_scenario(REPO / "scenarios" / "configure-tmpnames")
    source = padded_copy(replace(scenario, name="budget"), tmp, compiles)
    report, wall = campaign(scenario, source, tmp, budget_s=BUDGET_S, runs=100)
    build = report.runs[0].wall_s
    failed = [c.name for c in score(scenario.expect, report) if c.status != "pass"]
    table(["runs", "one build s", "campaign wall s", "budget + one build", "in time", "localize s", "expectations"],
          [[str(len(report.runs)), f"{build:.1f}", f"{wall:.1f}", f"{BUDGET_S + build:.1f}",
            "yes" if wall <= BUDGET_S + build else "NO", f"{report.phases.get('localize', 0.0):.1f}",
            "pass" if not failed else "FAIL " + ",".join(failed)]])
    for note in report.notes:
        print(f"    note: {note[:200]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="(1) only")
    parser.add_argument("--smoke", action="store_true", help=f"(1) on {SMOKE_SHAPE} only: CI")
    args = parser.parse_args()
    machine_facts()
    with tempfile.TemporaryDirectory(prefix="bench-localize-") as name:
        tmp = Path(name)
        bench_shapes(tmp, (SMOKE_SHAPE,) if args.smoke else SHAPES)
        if not (args.quick or args.smoke):
            per_compile = pad_seconds_per_compile(tmp)
            compiles = math.ceil(PAD_TARGET_S / per_compile)
            print(f"\none padding compile takes {per_compile:.2f} s here")
            bench_padded(tmp, compiles)
            bench_budget(tmp, compiles)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
