"""The traced replays: an intrinsic Python step's process replayed alone under the line
tracer, in pairs, in the conditions the stabiliser search found to vary (each pair's
PYTHONHASHSEEDs differ when the hash seed is one; ASLR stays on, as in every replay),
until a pair gives two different outputs; their streams are compared (streams.py) and the
line found is classed (causes.py).

Each traced replay has a time budget the report states: TRACE_FACTOR times the step's own
replay, at least MIN_TRACE_S, at most a quarter of what the localization budget has left;
past it the tracer stops and says so. No pair starts that the budget cannot finish."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from fuzzer.execute.replay_spread import Replayer, SpreadReplayer
from fuzzer.execute.step_replay import StepCall, StepReplayer, Variation
from fuzzer.explain.budget import Budget
from fuzzer.explain.lines import streams
from fuzzer.explain.lines.causes import located
from fuzzer.explain.lines.program import Program, program
from fuzzer.model import LineStatus, SourceLine
from fuzzer.model import Stabilizer as S

INJECTED = Path(__file__).parent / "injected"
TRACE_FACTOR = 80  # measured on gen.py with 20,000 labels, a quiet machine: 55x (3.11), 70x (3.12) its own 0.13 s
MIN_TRACE_S = 10.0
MAX_EVENTS = 2_000_000
PAIRS = 3


def search(replayer: Replayer, varied: tuple[str, ...], budget: Budget, per_replay_s: float) -> SourceLine:
    """`varied`: the stabilisers found (of every set found), whose conditions the pairs keep varying."""
    if isinstance(replayer, SpreadReplayer):  # a traced replay is one at a time: the step's own slot
        replayer = replayer.own
    if not isinstance(replayer, StepReplayer):  # the tracer and its streams live on this machine
        return SourceLine(status=LineStatus.SKIPPED, note=(
            "the step's replays run on a Dask worker; the line search traces replays on this machine only"))
    call: StepCall = replayer.call
    found = program(call.argv, str(replayer.tree / call.cwd), call.env)
    if found.language != "python":
        return SourceLine(status=LineStatus.SKIPPED, note=_not_python(found, varied))
    if found.problem:
        return SourceLine(status=LineStatus.SKIPPED, note=(
            f"`{found.path}` runs under an interpreter given {found.problem}: the tracer cannot be loaded through "
            "the environment"))
    trace_s = tracer_budget(per_replay_s, budget.left())
    if trace_s is None:
        return SourceLine(status=LineStatus.SKIPPED, note=(
            f"{budget.describe()} has {max(budget.left(), 0):.0f} s left: too little for two traced replays of a "
            f"step whose replay takes {per_replay_s:.1f} s"))
    with tempfile.TemporaryDirectory(prefix="lines-", dir=replayer.logs) as out:
        return _pairs(replayer, call, varied, budget, traced_limits(trace_s, per_replay_s), Path(out))


def tracer_budget(per_replay_s: float, left_s: float) -> float | None:
    """Each traced replay's time budget; None when what is left would not hold a pair of
    traced replays of a step this slow (tracing costs up to TRACE_FACTOR times the step's own time)."""
    trace_s = math.floor(10 * min(max(TRACE_FACTOR * per_replay_s, MIN_TRACE_S), left_s / 4)) / 10
    return trace_s if trace_s >= 2 * per_replay_s and 2 * trace_s <= left_s else None


def traced_limits(trace_s: float, per_replay_s: float) -> tuple[float, float]:
    """A traced replay's tracer budget, and how long the replay may run: the tracer stops at
    its budget and the step runs on untraced (its own time, twice over on a loaded machine),
    then writes its stream (MIN_TRACE_S). Held to STEP_TIMEOUT_S, a replay traced for 380 s
    was killed at 120 s and gave no stream (NNPACK's 2d-fourier-8x8, 18 s untraced)."""
    return trace_s, trace_s + 2 * per_replay_s + MIN_TRACE_S


def _pairs(replayer: StepReplayer, call: StepCall, varied: tuple[str, ...], budget: Budget,
           limits: tuple[float, float], out: Path) -> SourceLine:
    trace_s = limits[0]
    tried = 0
    for pair in range(PAIRS):
        if pair and not budget.affords(2 * trace_s):
            break
        tried += 1
        sides = [_traced(call.env, out / f"stream-{pair}-{side}.json", limits, varied, 2 * pair + side)
                 for side in (1, 2)]
        outcomes = replayer.replay_each([variation for variation, _ in sides], 1)
        first, second = (outcomes[variation.name] for variation, _ in sides)
        if first.failed or second.failed:
            return SourceLine(status=LineStatus.NOT_FOUND, budget_s=trace_s,
                              note=f"a traced replay {first.failure or second.failure}")
        if first.digests == second.digests:
            continue
        paths = [out / f"stream-{pair}-{side}.json" for side in (1, 2)]
        missing = [p.name for p in paths if not p.is_file()]
        if missing:
            return SourceLine(status=LineStatus.NOT_FOUND, budget_s=trace_s, note=(
                "a traced replay wrote no stream (it left through os._exit or exec, or its interpreter did not run "
                "the tracer)"))
        a, b = (streams.read(p) for p in paths)
        conditions = [condition for _, condition in sides]
        parted = streams.parting(a, b)
        if parted is None:
            return located_nowhere(a, b, conditions, trace_s)
        return located(a, b, parted, conditions, trace_s, varied)
    return SourceLine(status=LineStatus.NOT_FOUND, budget_s=trace_s, note=(
        f"the traced replays gave the same output in each of the {tried} pair(s) tried: no two executions to "
        "compare"))


def located_nowhere(a: streams.Stream, b: streams.Stream, conditions: list[str], trace_s: float) -> SourceLine:
    stopped = [s.stopped for s in (a, b) if s.stopped]
    why = (f"tracing stopped ({stopped[0]}) before the replays parted" if stopped else
           "the traced code ran alike in both (values included): the difference comes from code not traced "
           "(the standard library, a C extension, a child process)")
    return SourceLine(status=LineStatus.NOT_FOUND, replays=conditions, tracer=f"{a.mode}, Python {a.python}",
                      budget_s=trace_s, seconds=[a.seconds, b.seconds], note=why)


def _traced(env: dict[str, str], out: Path, limits: tuple[float, float], varied: tuple[str, ...],
            seed: int) -> tuple[Variation, str]:
    """A replay under the tracer, and the conditions it ran in, said for the report;
    `limits`: `traced_limits`."""
    trace_s, timeout_s = limits
    path = os.pathsep.join(filter(None, (str(INJECTED), env.get("PYTHONPATH", ""))))
    extra = [("PYTHONPATH", path), ("BUILDFUZZ_LINES_OUT", str(out)), ("BUILDFUZZ_LINES_BUDGET_S", str(trace_s)),
             ("BUILDFUZZ_LINES_MAX_EVENTS", str(MAX_EVENTS))]
    said = []
    for name in varied:
        if name == S.PYTHONHASHSEED.value:
            extra.append(("PYTHONHASHSEED", str(seed)))
            said.append(f"PYTHONHASHSEED={seed}")
        elif name == S.ASLR.value:
            said.append("ASLR on")
        else:
            said.append(f"{name} not fixed")
    return Variation(f"lines-{out.stem}", env=tuple(extra), timeout_s=timeout_s), ", ".join(said) or "as traced, nothing fixed"


def _not_python(found: Program, varied: tuple[str, ...]) -> str:
    what = {"perl": "a Perl script", "compiled": "a compiled program", "shell": "a shell script"}.get(
        found.language, f"a {found.language} program")
    stable = f"; stabilised by {' or '.join(varied)}" if varied else ""
    return f"the line search is Python-only: `{found.path}` is {what}{stable}"
