"""The line search's cost in steps' time: each Python generator step of the bundled
scenarios run plain and under the line tracer, side by side, and the analysis of two
traced streams (where they part, why), each as a multiple of the step's own time.

    python bench/bench_lines.py               # every scenario below, 5 reps a side (~3 min)
    python bench/bench_lines.py --smoke       # hashseed, 1 rep: seconds (CI)
    python bench/bench_lines.py --scenarios peachpy-aslr --reps 9
    python bench/bench_lines.py --scenarios --tree DIR   # a tree of yours, built by make (real PeachPy)

Each scenario (and each --tree) is copied and built once (`make -j1`) through a SHELL that
records each command with the environment make gave it; the commands that run a Python
interpreter (`fuzzer/explain/lines/program.py` decides) are its steps, each run again in
the built tree with `sh -c` in that environment, plain and traced in turn (interleaved: a
noisy neighbour slows both). The line search is two traced replays plus the analysis; its multiple is what
the localization budget pays per pair (replays.py's TRACE_FACTOR bounds one traced replay).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO)]

from fuzzer.explain.lines import streams  # noqa: E402
from fuzzer.explain.lines.causes import located  # noqa: E402
from fuzzer.explain.lines.program import program  # noqa: E402
from fuzzer.explain.lines.replays import INJECTED, MAX_EVENTS, TRACE_FACTOR  # noqa: E402

SCENARIOS = ("peachpy-aslr", "hashseed", "set-order-surfaces-later", "uuid-build-id", "peachpy-env-joint")


RECORDER = """#!/bin/sh
# make's SHELL: keeps each command with the environment make gave it, then runs it
n=$(ls "$BENCH_LINES_RECORD" | wc -l)
env -0 > "$BENCH_LINES_RECORD/$n.env"
printf '%s' "$2" > "$BENCH_LINES_RECORD/$n.cmd"
exec /bin/sh "$@"
"""


def python_steps(tree: Path, scratch: Path) -> list[tuple[str, dict[str, str]]]:
    """Each command the build ran that runs a Python interpreter, with the environment make
    gave it (its exported variables: PYTHONPATH), recorded by building once through RECORDER."""
    record, shell = scratch / "record", scratch / "recorder.sh"
    record.mkdir()
    shell.write_text(RECORDER)
    shell.chmod(0o755)
    subprocess.run(["make", "-j1", f"SHELL={shell}"], cwd=tree, check=True, capture_output=True,
                   env={**os.environ, "BENCH_LINES_RECORD": str(record)})
    steps = []
    for kept in sorted(record.glob("*.cmd"), key=lambda p: int(p.stem)):
        command = kept.read_text()
        env = dict(v.split("=", 1) for v in (record / f"{kept.stem}.env").read_text().split("\0") if "=" in v)
        env.pop("BENCH_LINES_RECORD", None)
        words = command.split()
        if words and program(tuple(words), str(tree), env).language == "python":
            steps.append((command, env))
    return steps


def timed(command: str, tree: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(["sh", "-c", command], cwd=tree, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def traced_env(env: dict[str, str], out: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, (str(INJECTED), env.get("PYTHONPATH", ""))))
    return {**env, "PYTHONPATH": path, "BUILDFUZZ_LINES_OUT": str(out),
            "BUILDFUZZ_LINES_BUDGET_S": "600", "BUILDFUZZ_LINES_MAX_EVENTS": str(MAX_EVENTS)}


def bench_step(command: str, env: dict[str, str], tree: Path, reps: int, scratch: Path) -> str:
    plain, traced, analysed, events = [], [], [], 0
    for rep in range(reps):
        outs = [scratch / f"s{rep}-{side}.json" for side in (1, 2)]
        plain.append(timed(command, tree, env))
        traced.append(timed(command, tree, traced_env(env, outs[0])))
        traced.append(timed(command, tree, traced_env(env, outs[1])))
        start = time.perf_counter()
        a, b = (streams.read(p) for p in outs)
        found = streams.parting(a, b)
        if found is not None:
            located(a, b, found, ["1", "2"], 0.0)
        analysed.append(time.perf_counter() - start)
        events = max(events, len(a.events))
    step, one = statistics.median(plain), statistics.median(traced)
    search = 2 * one + statistics.median(analysed)
    return (f"  {command[:70]:70}  step {step:6.3f} s  traced {one:6.3f} s ({one / step:5.1f}x)  "
            f"analysis {statistics.median(analysed):6.3f} s  search {search / step:5.1f}x  ({events} events)")


def bench_tree(source: Path, reps: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-lines-") as scratch:
        tree = Path(scratch) / source.name
        shutil.copytree(source, tree)
        steps = python_steps(tree, Path(scratch))
        print(f"{source.name}: {len(steps)} Python step(s)")
        for command, env in steps:
            print(bench_step(command, env, tree, reps, Path(scratch)), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="hashseed, 1 rep: the measured path, seconds")
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    parser.add_argument("--tree", type=Path, action="append", default=[],
                        help="also a tree of yours built by `make` (a real PeachPy kernel's)")
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    names, reps = (["hashseed"], 1) if args.smoke else (args.scenarios, args.reps)
    trees = [REPO / "scenarios" / name for name in names] + ([] if args.smoke else args.tree)
    print(f"Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"a traced replay's budget is {TRACE_FACTOR}x the step's replay (replays.py)")
    for tree in trees:
        bench_tree(tree.resolve(), reps)
    print(f"load after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
