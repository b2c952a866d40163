"""A stabiliser test changes only the variables it names: every replay of one test runs
with the same environment, byte for byte (with ASLR off a step's addresses follow the
environment's size: by hand, NNPACK's shdotxf kernel under `setarch -R` and
PYTHONHASHSEED=0 gave other bytes with an 8-character variable added). Real replays of a
step that writes out its own environment block, and its clock."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from fuzzer.execute import step_replay
from fuzzer.execute.guard import Guard
from fuzzer.execute.step_replay import StepCall, StepReplayer
from fuzzer.explain import stabilizers
from fuzzer.observe import hash_file

# the environment as the process got it, in order, and the whole seconds of its clock
WRITES_ENVIRONMENT = ("import os; open('out', 'wb').write(b'\\0'.join(k + b'=' + v for k, v in os.environb.items()))")
WRITES_CLOCK = "import time; open('out', 'w').write(str(int(time.time())))"


def _replays(tmp_path: Path, script: str, variation, times: int = 3):
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    call = StepCall((sys.executable, "-c", script), ".", {"PATH": os.environ["PATH"], "MAKELEVEL": "1"}, 0,
                    ("out",), ("out",), created=("out",))
    with Guard() as guard, StepReplayer(guard, tree, call, tuple(os.sched_getaffinity(0)), tmp_path / "logs") as r:
        return r.replay(variation, times)


@pytest.fixture(autouse=True)
def unpaced(monkeypatch):
    monkeypatch.setattr(step_replay, "SPREAD_S", 0.0)


@pytest.mark.parametrize("name", [v.name for v in stabilizers.candidates()] + ["every candidate"])
def test_every_replay_of_one_test_gets_the_same_environment(tmp_path, name):
    pool = stabilizers.candidates()
    fixed = pool if name == "every candidate" else [v for v in pool if v.name == name]
    outcome = _replays(tmp_path, WRITES_ENVIRONMENT, stabilizers.combine(fixed))
    assert not outcome.failed, outcome.failure
    assert outcome.distinct == 1, [c["out"] for c in outcome.contents]


@pytest.mark.needs("faketime")
def test_the_clock_candidate_still_sets_the_clock(tmp_path):
    (clock,) = [v for v in stabilizers.candidates() if v.name == "clock"]
    outcome = _replays(tmp_path, WRITES_CLOCK, clock, times=2)
    assert not outcome.failed, outcome.failure
    expected = tmp_path / "expected"
    expected.write_text("946684800")  # FROZEN_AT, 2000-01-01 in UTC
    assert {c["out"] for c in outcome.contents} == {hash_file(str(expected))}
