"""Benchmark what a step replay pays to run in a replay slot's mount namespace.

    python bench/bench_replay_entry.py            # 200 replays of `true` a mode, 3 rounds ABCCBA (~1 min)
    python bench/bench_replay_entry.py --smoke    # 20 replays, 1 round (seconds; CI)

A replay slot (fuzzer/execute/replay_slots.py) runs each replay of a step in a copy of the
tree mounted at the campaign's path. Three ways to run N replays of a step whose command
is `true`, each through StepReplayer and a guard, side by side, in rounds (ABCCBA):

- per replay: the guard outside, every replay entering a mount namespace of its own
  (unshare, a Python that mounts, env -C: what replay slots and Dask workers did before;
  `per_replay` below is their wrapper, given here as the variation's);
- slot's namespace: the guard started once inside the slot's namespace (`holding`), so
  each replay starts there at no cost (what the slots do);
- none: the guard and the replays at the tree itself, no namespace (the floor).

Per replay = (a guard's whole life with N replays - with none) / N, in CPU (RUSAGE_CHILDREN:
the replays' and the guard's, counted once the guard is reaped) and in wall time. The
replays' spread over the clock (SPREAD_S) is turned off here: it is a wait, not a cost.
Medians over the rounds; read the ratios to the "none" row on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzzer.model import available_cpus  # noqa: E402
from fuzzer.execute import step_replay  # noqa: E402
from fuzzer.execute.guard import Guard  # noqa: E402
from fuzzer.execute.replay_slots import holding  # noqa: E402
from fuzzer.execute.step_replay import StepCall, StepReplayer, Variation, Wrapper  # noqa: E402
from fuzzer.tools import unshare  # noqa: E402

MODES = ("per replay", "slot's namespace", "none")


def per_replay(isolation: unshare.Isolation, tree: Path, path: Path, call: StepCall) -> Wrapper:
    """A replay of `call` in `tree` mounted at `path`, in a mount namespace made for it (env -C
    moves to the step's directory from the path's root without touching the environment)."""
    env_program = shutil.which("env") or "/usr/bin/env"
    return lambda argv: isolation.wrap([env_program, "-C", str(path / call.cwd), "--", *argv], tree, path, call.env)


def run(mode: str, isolation: unshare.Isolation, path: Path, copy: Path, logs: Path, n: int) -> tuple[float, float]:
    """(wall s, CPU s) of one guard's life running `n` replays of `true` in `mode`."""
    call = StepCall(argv=("true",), cwd=".", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, exit_code=0,
                    restored=(), compared=())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    variation = Variation("plain")
    if mode == "per replay":
        guard, tree, seen_at = Guard(), copy, None
        variation = Variation("plain", wrappers=(per_replay(isolation, copy, path, call),))
    elif mode == "slot's namespace":
        guard, tree, seen_at = Guard(inside=holding(isolation, copy, path)), copy, path
    else:
        guard, tree, seen_at = Guard(), path, None
    with guard, StepReplayer(guard, tree, call, tuple(available_cpus()), logs, seen_at=seen_at) as replayer:
        if n:  # else the guard's life alone: its start (and its namespace's), its end
            outcome = replayer.replay(variation, n)
            assert not outcome.failed, outcome.failure
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="20 replays, one round (CI)")
    parser.add_argument("--replays", type=int, help="replays a mode and round (default 200; --smoke 20)")
    parser.add_argument("--rounds", type=int, help="rounds, each every mode twice (default 3; --smoke 1)")
    args = parser.parse_args()
    isolation = unshare.isolation()
    if isolation is None:
        print(f"cannot benchmark: no mount namespaces here ({unshare.UNSHARE.problem()})", file=sys.stderr)
        return 2
    n, rounds = args.replays or (20 if args.smoke else 200), args.rounds or (1 if args.smoke else 3)
    step_replay.SPREAD_S = 0.0  # the spread is a wait for the clock, not a cost of entering
    print(f"load average {os.getloadavg()[0]:.2f} on {len(available_cpus())} CPUs; {isolation.mode}; "
          f"{n} replays of `true` a mode, {rounds} round(s)")
    samples: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory(prefix="bench-replay-entry-") as tmp_dir:
        tmp = Path(tmp_dir)
        path, copy = tmp / "campaign", tmp / "campaign.replays" / "0"
        path.mkdir()
        copy.mkdir(parents=True)
        for _ in range(rounds):
            for mode in MODES + MODES[::-1]:
                wall_n, cpu_n = run(mode, isolation, path, copy, tmp / "logs", n)
                wall_0, cpu_0 = run(mode, isolation, path, copy, tmp / "logs", 0)
                samples[mode].append(((wall_n - wall_0) / n, (cpu_n - cpu_0) / n))
    median = {mode: tuple(sorted(column)[len(column) // 2] for column in zip(*rows)) for mode, rows in samples.items()}
    floor_wall, floor_cpu = median["none"]
    for mode in MODES:
        wall, cpu = median[mode]
        print(f"  {mode:<17} per replay: CPU {cpu * 1000:6.2f} ms ({(cpu - floor_cpu) * 1000:+6.2f} over none)  "
              f"wall {wall * 1000:6.2f} ms ({(wall - floor_wall) * 1000:+6.2f} over none)")
    before, now = median["per replay"][1] - floor_cpu, median["slot's namespace"][1] - floor_cpu
    print(f"namespace cost per replay, CPU: per replay {before * 1000:.2f} ms, slot's namespace {now * 1000:.2f} ms")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
