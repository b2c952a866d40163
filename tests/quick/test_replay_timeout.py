"""A replay is killed past STEP_TIMEOUT_S unless its variation allows longer: a traced
replay (the line search) runs for its tracer's budget and then the step's own time. Held
to STEP_TIMEOUT_S, NNPACK's 2d-fourier-8x8 replays traced for 382 s were killed at 120 s
and gave no stream, in a 45 minute run short of budget for two kernels' stabilisers."""

from __future__ import annotations

import os
import sys

from hypothesis import given
from hypothesis import strategies as st

from fuzzer.execute import step_replay
from fuzzer.execute.guard import Guard
from fuzzer.execute.step_replay import StepCall, StepReplayer, Variation
from fuzzer.explain.lines.replays import traced_limits

SLOW_STEP = "import time; time.sleep(1.0); open('out', 'w').write('done')"


def _replay(tmp_path, variation: Variation):
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    call = StepCall((sys.executable, "-c", SLOW_STEP), ".", {"PATH": os.environ["PATH"]}, 0, ("out",), ("out",),
                    created=("out",))
    with Guard() as guard, StepReplayer(guard, tree, call, tuple(os.sched_getaffinity(0)), tmp_path / "logs") as r:
        return r.replay(variation, 1)


def test_a_replay_past_the_step_timeout_is_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(step_replay, "STEP_TIMEOUT_S", 0.3)
    outcome = _replay(tmp_path, Variation("plain"))
    assert outcome.failed and outcome.exit_codes == (None,)


def test_a_variation_with_a_longer_timeout_lets_the_replay_finish(tmp_path, monkeypatch):
    monkeypatch.setattr(step_replay, "STEP_TIMEOUT_S", 0.3)
    outcome = _replay(tmp_path, Variation("traced", timeout_s=30.0))
    assert not outcome.failed, outcome.failure
    assert outcome.exit_codes == (0,)


@given(st.floats(0.1, 600), st.floats(0.01, 600))
def test_a_traced_replay_may_run_its_tracer_budget_and_then_the_step(trace_s, per_replay_s):
    budget, timeout_s = traced_limits(trace_s, per_replay_s)
    assert budget == trace_s
    assert timeout_s >= trace_s + per_replay_s
