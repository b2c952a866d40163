"""A traced parallel make build: every step is replayable (tests/quick/test_audit_make_stdin.py
has the trace lines)."""

from __future__ import annotations

import subprocess

import pytest

from fuzzer.explain import audit
from fuzzer.tools import strace
from fuzzer.trace.steps import load_trace


@pytest.mark.needs("strace")
def test_every_step_of_a_parallel_make_is_replayable(tmp_path):
    rules = "".join(f"out{i}:\n\tsleep 0.2; echo {i} > out{i}\n" for i in range(4))
    (tmp_path / "Makefile").write_text(f"all: {' '.join(f'out{i}' for i in range(4))}\n{rules}")
    trace_path = tmp_path / "trace.txt"
    subprocess.run(strace.wrap(["make", "-j4", "-s"], str(trace_path)), cwd=tmp_path, check=True,
                   stdin=subprocess.DEVNULL)
    trace = load_trace(trace_path, str(tmp_path))
    plan = audit.plan(trace, {f"out{i}" for i in range(4)}, 1.0, (), {})
    assert (len(plan.chosen), plan.unreplayable) == (4, ())
