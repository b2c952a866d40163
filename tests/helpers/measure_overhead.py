"""Measure the guard's per-run overhead and the jitter engine's CPU use.

    python tests/helpers/measure_overhead.py

Guard: N runs of `true` under the guard (start + wait) against plain subprocess.run.
Jitter: CPU time of this process (only the engine thread works; the main thread blocks
in Guard.wait) per second of build wall time, for a static tree and a fork-heavy build.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fuzzer.execute.guard import Guard  # noqa: E402
from fuzzer.execute.jitter import Jitter  # noqa: E402

ENV = {"PATH": os.environ["PATH"]}
RUNS, ROUNDS = 100, 7


def per_run_ms(run) -> float:
    started = time.perf_counter()
    for _ in range(RUNS):
        run()
    return (time.perf_counter() - started) / RUNS * 1e3


def guard_overhead(guard: Guard, log: str) -> None:
    """Interleaved rounds, median: the machine's background load drifts."""

    def guarded() -> None:
        guard.start(["true"], cwd="/", env=ENV, cpus=None, log_path=log)
        guard.wait(None)

    def direct() -> None:
        with open(log, "wb") as out:
            subprocess.run(["true"], cwd="/", env=ENV, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    rounds = sorted((per_run_ms(guarded), per_run_ms(direct)) for _ in range(ROUNDS))
    guarded_ms, direct_ms = rounds[ROUNDS // 2]
    print(f"guard: {guarded_ms:.3f} ms per `true` run vs {direct_ms:.3f} ms direct "
          f"-> overhead {guarded_ms - direct_ms:.3f} ms per run (median of {ROUNDS} rounds of {RUNS})")


def kill_latency(guard: Guard, log: str) -> None:
    script = "for i in $(seq 10); do sleep 30 & done; ( setsid sleep 37 & ); wait"
    guard.start(["sh", "-c", script], cwd="/", env=ENV, cpus=None, log_path=log)
    while len(guard.processes()) < 12:
        time.sleep(0.005)
    started = time.perf_counter()
    guard.kill()
    print(f"guard: kill() of a 12-process tree (with a daemon) returns in {(time.perf_counter() - started) * 1e3:.1f} ms")


def jitter_cpu(guard: Guard, log: str, name: str, script: str, intensity: float) -> None:
    guard.start(["sh", "-c", script], cwd="/", env=ENV, cpus=None, log_path=log)
    cpu, wall = time.process_time(), time.perf_counter()
    with Jitter(intensity, 1, guard.processes) as jitter:
        guard.wait(60)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    stops = sum(e.action == "stop" for e in jitter.events)
    print(f"jitter {name} (intensity {intensity}): {cpu / wall:.1%} of one core over {wall:.2f} s, {stops} stops")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, Guard() as guard:
        log = os.path.join(tmp, "log")
        guard_overhead(guard, log)
        kill_latency(guard, log)
        for n in (4, 32):
            script = f"for i in $(seq {n}); do sleep 3 & done; wait"
            jitter_cpu(guard, log, f"{n} sleeping processes", script, 1.0)
            jitter_cpu(guard, log, f"{n} sleeping processes", script, 0.0)
        forks = "i=0; while [ $i -lt 300 ]; do sleep 0.005; i=$((i+1)); done"
        jitter_cpu(guard, log, "300 short-lived processes", forks, 1.0)
        jitter_cpu(guard, log, "300 short-lived processes", forks, 0.0)


if __name__ == "__main__":
    main()
