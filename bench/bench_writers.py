"""Localization time on a script-driven build, whole-step replays against writer-process
replays, as ratios to one build's time.

    python bench/bench_writers.py            # a ~20 s configure phase, 2 rounds (~6 minutes on 2 CPUs)
    python bench/bench_writers.py --smoke    # a ~0.5 s phase, 1 round (~1 minute): CI runs this

The build is scenarios/script-autom4te with its configure phase stretched: `sh build.sh`
runs `sh ./configure.sh`, a slow phase of checks, and inside it one Perl process writes
autom4te.cache/requests in Perl's hash order. With no make above it, the whole phase is
one step. Two ways of explaining it, in one process, alternating (A B, then B A):

- `step`: what buildfuzz did before writer processes: every replay runs the whole step;
- `writer`: as shipped: the Perl process is replayed alone, with its traced argv, cwd and
  environment, its files restored.

Then, once (not with --smoke), `step, budget 1 h`: whole-step replays with a
localization budget large enough for them, which is what naming the stabiliser costs
that way.

Expectations, written before the first run: `writer` names PERL_HASH_SEED and localizes
within 3 builds' time (two traced builds plus about 10 s of replays of a 0.05 s process);
`step` replays a 20 s step: its first 5 replays (100 s) exceed half of what the default
budget (180 s, less the two traced builds) leaves, so it draws no kind ("not replayed"),
and its localization still costs the two traced builds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench_core import REPO, machine_facts, table

from fuzzer.campaign import run_campaign
from fuzzer.config import FuzzConfig
from fuzzer.explain import writer as writer_module
from fuzzer.model import Report

SCENARIO = REPO / "scenarios" / "script-autom4te"
CHECKS = 9  # the `check` calls in configure.sh
RUNS = 3  # intrinsic: the first rebuild diverges


def stretched_copy(tmp: Path, phase_s: float) -> Path:
    """The scenario with its configure phase taking about `phase_s` seconds."""
    copy = tmp / f"script-build-{phase_s:g}s"
    if not copy.exists():
        shutil.copytree(SCENARIO, copy, ignore=shutil.ignore_patterns("scenario.toml"))
        script = copy / "configure.sh"
        script.write_text(script.read_text().replace("sleep 0.6", f"sleep {phase_s / CHECKS:.3f}"))
    return copy


@contextmanager
def whole_step_replays():
    """Replays run the whole step, as before writer processes."""
    shipped = writer_module.ReplayTargets._target

    def step_only(self, candidate):
        trace = self.reference if candidate.ref is not None else self.divergent
        return writer_module.ReplayTarget(self._step_call(candidate, trace), candidate.duration, None)

    writer_module.ReplayTargets._target = step_only
    try:
        yield
    finally:
        writer_module.ReplayTargets._target = shipped


def campaign(source: Path, tmp: Path, **settings) -> Report:
    store = Path(tempfile.mkdtemp(prefix="store-", dir=tmp))
    try:
        # its difference is autom4te.cache/, build-system bookkeeping: counted, as the scenario does
        config = FuzzConfig(source=source, command="sh build.sh", store=store, seed=1, runs=RUNS,
                            count_bookkeeping=True, **settings)
        return run_campaign(config).report
    finally:
        shutil.rmtree(store, ignore_errors=True)


UNBOUNDED_S = 3600.0


def measure(mode: str, source: Path, tmp: Path) -> list[str]:
    started = time.monotonic()
    if mode.startswith("step"):
        with whole_step_replays():
            report = campaign(source, tmp, **({"localize_budget_s": UNBOUNDED_S} if "budget 1 h" in mode else {}))
    else:
        report = campaign(source, tmp)
    build = report.runs[0].wall_s
    spent = report.phases.get("localize", 0.0)
    top = report.culprits[0] if report.culprits else None
    replayed = "writer" if top and top.writer_process and top.writer_process.replayed else "step"
    return [mode, f"{build:.1f}", f"{spent:.1f}", f"{spent / build:.2f}x", top.kind if top else "-",
            " + ".join(top.stabilized_by) if top and top.stabilized_by else "-", replayed,
            f"{time.monotonic() - started:.0f}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a ~0.5 s phase, one round: checks the bench runs")
    parser.add_argument("--phase", type=float, default=20.0, help="seconds of the configure phase (default 20)")
    args = parser.parse_args()
    phase_s, rounds = (0.5, 1) if args.smoke else (args.phase, 2)
    machine_facts()
    with tempfile.TemporaryDirectory(prefix="bench-writers-") as name:
        tmp = Path(name)
        source = stretched_copy(tmp, phase_s)
        print(f"\nlocalization / one build, configure phase ~{phase_s:g} s, {rounds} round(s), target <= 3x")
        order = [("step", "writer") if r % 2 == 0 else ("writer", "step") for r in range(rounds)]
        rows = [measure(mode, source, tmp) for pair in order for mode in pair]
        if not args.smoke:
            rows.append(measure("step, budget 1 h", source, tmp))
        table(["replays", "build s", "localize s", "ratio", "kind", "stabilised by", "replayed", "campaign s"],
              sorted(rows, key=lambda r: r[0]))
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
