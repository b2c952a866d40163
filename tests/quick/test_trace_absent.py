"""Which files a step created, per the trace (fuzzer/trace/absent.py): what its replays remove first."""

from __future__ import annotations

from fuzzer.trace.absent import Absence
from fuzzer.trace.synthetic import FakeStep, synthetic_trace


def _created(trace, command):
    step = next(s for s in trace.steps if s.command == command)
    return Absence(trace).created([trace.processes[i] for i in step.members], step.start, step.writes)


def test_a_file_the_step_found_absent_before_writing_it_was_created():
    trace = synthetic_trace([FakeStep("gen", 1.0, 2.0, probes={"out": (1.1, False)}, writes={"out": 1.5})])
    assert _created(trace, "gen") == ("out",)


def test_a_file_the_step_read_before_writing_it_was_there():
    trace = synthetic_trace([FakeStep("bump", 1.0, 2.0, reads={"count": 1.1}, writes={"count": 1.5})])
    assert _created(trace, "bump") == ()


def test_unlooked_at_files_follow_the_last_other_access_before_the_step():
    trace = synthetic_trace([
        FakeStep("first", 1.0, 2.0, writes={"kept": 1.5, "gone": 1.5}),
        FakeStep("rm", 2.5, 3.0, deletes={"gone": 2.6}),
        FakeStep("probe", 3.1, 3.2, probes={"fresh": (3.15, False)}),
        FakeStep("gen", 4.0, 5.0, writes={"kept": 4.5, "gone": 4.5, "fresh": 4.5, "source": 4.5}),
    ])
    # "source": nothing in the trace says whether it was there (it may be the source's): not removed
    assert _created(trace, "gen") == ("fresh", "gone")
