"""Benchmark the seed's shape at full size: a CMake + Ninja build of 30 Python generator
steps run one after another, chained by DEPENDS (each reads the one before, as NNPACK's
CMake build chains its PeachPy kernels), compiled into libkernels.a, audited and localized
by `buildfuzz run --runs 2 --check-steps all` (issue 19, item 5).

    python bench/bench_seed_shape.py               # 30 steps, 0.1 x the durations (~8 min)
    python bench/bench_seed_shape.py --scale 1     # the real durations: 1-60 s a step (~70 min)
    python bench/bench_seed_shape.py --smoke       # 4 steps of 0.02-1.2 s (CI; ~2 min)

The project is the audit-generator-chain scenario's (its gen.py, its make_project.py), with
each step's mode and CPU time given here. As in a real PyTorch build, the varying steps are
short (1-5 s) and the stable ones are most of the time (10-60 s): steps 4, 14 and 27 vary
only with ASLR on, 9 and 19 only with the hash seed unset, 24 only with both; the other 24
never. What is measured: whether every varying step is named with its own right stabiliser
set and no stable one is, and the target, the audit's and localization's time together over
one build's (the untraced reference's wall time), at most 3 on 2 CPUs. Each audited step's
replays and the bound they give are printed: k replays identical to the traced build put the
variation left below 1 - 0.05^(1/k) at 95% (about 3/k). Durations are CPU time (gen.py
--seconds): on a loaded machine a step takes longer, and so does the build it is compared with.

Hand measurement (before buildfuzz ran on it): the 30-step project built once (cmake --build
-j 2), then each generator alone on the built tree, 8 runs per cell, distinct outputs under
plain / setarch -R / PYTHONHASHSEED=0 / both:
    k4, k14, k27 (aslr)   8 / 1 / 8 / 1
    k9, k19 (seed)        8 / 8 / 1 / 1
    k24 (joint)           8 / 8 / 8 / 1
    the other 24 (stable) 1 / 1 / 1 / 1
and k24 with --seconds=0.3, 4 runs per cell: 4 / 4 / 4 / 1 (the CPU time spent first
changes nothing). Expected: culprits k4, k14, k27 stabilised by ASLR; k9, k19 by
PYTHONHASHSEED; k24 by both together; no other.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "scenarios" / "audit-generator-chain"
sys.path.insert(0, str(SCENARIO))

from make_project import cmakelists  # noqa: E402

COMMAND = "cmake -S . -B build -G Ninja >/dev/null && cmake --build build -j {jobs}"
TARGET_BUILDS = 3.0
STABLE_S = [60, 15, 40, 25, 50, 10, 35, 20, 45, 30]  # the long stable steps, in turn
FULL = {4: ("aslr", 2), 9: ("seed", 3), 14: ("aslr", 1), 19: ("seed", 4), 24: ("joint", 5), 27: ("aslr", 2)}
SMOKE = {1: ("aslr", 1), 2: ("seed", 1), 3: ("joint", 1)}
STABILISERS = {"aslr": ["ASLR"], "seed": ["PYTHONHASHSEED"], "joint": ["ASLR", "PYTHONHASHSEED"]}


def layout(count: int, varying: dict[int, tuple[str, float]], scale: float) -> tuple[list[str], list[float]]:
    modes, seconds, stable = [], [], 0
    for i in range(count):
        if i in varying:
            mode, full = varying[i]
        else:
            mode, full, stable = "stable", STABLE_S[stable % len(STABLE_S)], stable + 1
        modes.append(mode)
        seconds.append(round(full * scale, 3))
    return modes, seconds


def project(src: Path, modes: list[str], seconds: list[float]) -> None:
    src.mkdir(parents=True)
    shutil.copy(SCENARIO / "gen.py", src / "gen.py")
    (src / "CMakeLists.txt").write_text(cmakelists(len(modes), modes, seconds))


def run(src: Path, store: Path, report: Path) -> float:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fuzzer", "run", "--source", str(src), "--store", str(store),
                           "--runs", "2", "--seed", "1", "--check-steps", "all", "--report-json", str(report), "--quiet",
                           "--", COMMAND], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True)
    if done.returncode not in (0, 1) or not report.exists():
        sys.exit(f"buildfuzz run failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return time.monotonic() - started


def step_of(command: str) -> str:
    """k7 for a generator's command ("... gen.py aslr k7 k7.c ..."), else ""."""
    words = command.split()
    at = next((i for i, w in enumerate(words) if w.endswith("gen.py")), None)
    return words[at + 2] if at is not None and len(words) > at + 2 else ""


def judge(report: dict, modes: list[str]) -> list[str]:
    """What the report gets wrong: a varying step missed or with the wrong stabilisers, a
    stable step named."""
    named = {step_of(c["command"]): c for c in report["culprits"]}
    wrong = []
    for i, mode in enumerate(modes):
        culprit = named.get(f"k{i}")
        if mode == "stable":
            if culprit is not None:
                wrong.append(f"k{i} is stable but named: {culprit['kind']}")
        elif culprit is None:
            wrong.append(f"k{i} ({mode}) not named")
        elif sorted(culprit["stabilized_by"]) != sorted(STABILISERS[mode]):
            wrong.append(f"k{i} ({mode}) stabilised by {culprit['stabilized_by']}, expected {STABILISERS[mode]}")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="4 steps of 0.02-1.2 s")
    parser.add_argument("--scale", type=float, default=0.1, help="of the 1-60 s durations (default 0.1)")
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--report-json", type=Path, help="keep buildfuzz's report here")
    args = parser.parse_args()
    count, varying, scale = (4, SMOKE, 0.02) if args.smoke else (args.count, FULL, args.scale)
    if count < 2 or not 0 < scale <= 1:
        print("bench_seed_shape: --count must be at least 2 and --scale in (0, 1]", file=sys.stderr)
        return 2
    modes, seconds = layout(count, {i: v for i, v in varying.items() if i < count}, scale)
    with tempfile.TemporaryDirectory(prefix="bench-seed-shape-") as tmp:
        root = Path(tmp)
        project(root / "src", modes, seconds)
        load = os.getloadavg()
        wall = run(root / "src", root / "store", root / "report.json")
        report = json.loads((root / "report.json").read_text())
        if args.report_json:
            shutil.copy(root / "report.json", args.report_json)
        load_after = os.getloadavg()
    return show(report, modes, seconds, scale, wall, load, load_after)


def show(report: dict, modes: list[str], seconds: list[float], scale: float, wall: float, load, load_after) -> int:
    phases, audit = report["phases"], report["audit"] or {}
    build_s = report["runs"][0]["wall_s"]
    spent = phases.get("audit", 0.0) + phases.get("localize", 0.0)
    print(f"seed shape: {len(modes)} generator steps ({sum(m != 'stable' for m in modes)} varying), "
          f"{sum(seconds):.1f} s of generator CPU time a build (x{scale:g} of the real durations), 2 builds, "
          f"--check-steps all; load average {load[0]:.2f} before, {load_after[0]:.2f} after")
    print(f"one build (untraced reference): {build_s:.1f} s; audit {phases.get('audit', 0):.1f} s, localization "
          f"{phases.get('localize', 0):.1f} s, together {spent:.1f} s = {spent / build_s:.2f} builds' time "
          f"(target <= {TARGET_BUILDS:g}: {'met' if spent <= TARGET_BUILDS * build_s else 'missed'}); "
          f"whole run {wall:.1f} s")
    print(f"audit: {audit.get('audited', 0)} of {audit.get('reaching', 0)} steps audited, {audit.get('roots', 0)} "
          f"roots, {audit.get('left', 0)} left ({audit.get('why_left') or 'none'}), {audit.get('parallel', 0)} at once")
    for row in audit.get("steps", []):
        name = step_of(row["command"]) or row["command"][:40]
        print(f"  {name:42} {row['result']:14} {row['replays']} replays {row['seconds']:7.1f} s  {row['detail'][:110]}")
    for culprit in report["culprits"]:
        print(f"culprit {step_of(culprit['command']) or culprit['command'][:40]}: {culprit['kind']}, "
              f"stabilised by {' + '.join(culprit['stabilized_by']) or 'nothing'}")
    for note in report["notes"]:
        print(f"note: {note[:300]}")
    wrong = judge(report, modes)
    print("expectations: " + ("met" if not wrong else "MISSED: " + "; ".join(wrong)))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
