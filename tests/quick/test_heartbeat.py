"""In a log (no terminal), a long build or localization still prints a line at least every
HEARTBEAT_S: some CI systems kill a job that is silent for 10 minutes."""

import io
import threading
import time

from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.plan import Perturbation
from fuzzer.report.progress import HEARTBEAT_S, ConsoleEvents


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def record(index):
    return RunRecord(index, Perturbation(4, (0, 1), 0.5, 9), RunStatus.OK, 0, 1.5, None, "")


def test_a_line_once_nothing_was_written_for_the_interval():
    out, clock = io.StringIO(), Clock()
    events = ConsoleEvents(out, bar=False, planned=20, clock=clock)
    events.phase("explore")
    events.run_finished(record(0), "A", 20)
    before = out.getvalue()
    clock.now += HEARTBEAT_S - 1
    events.heartbeat()
    assert out.getvalue() == before  # a line was written recently enough
    clock.now += 1
    events.heartbeat()
    assert out.getvalue()[len(before):] == f"-- explore: run 1/20 building, {int(HEARTBEAT_S)}s elapsed\n"


def test_localization_and_long_campaigns_say_their_phase_and_elapsed_time():
    out, clock = io.StringIO(), Clock()
    events = ConsoleEvents(out, bar=False, clock=clock)
    events.phase("localize")
    clock.now += 3723
    events.heartbeat()
    assert out.getvalue().splitlines()[-1] == "-- localize: working, 1h02m elapsed"


def test_a_later_phase_says_how_long_it_has_been_working_itself():
    out, clock = io.StringIO(), Clock()
    events = ConsoleEvents(out, bar=False, clock=clock)
    events.phase("explore")
    clock.now += 22
    events.phase("audit")
    clock.now += 40
    events.heartbeat()
    assert out.getvalue().splitlines()[-1] == "-- audit: working for 40s, 1m02s elapsed"


def test_a_resumed_campaign_counts_from_its_next_run():
    out, clock = io.StringIO(), Clock()
    events = ConsoleEvents(out, bar=False, planned=40, clock=clock)
    events.started(3, 7, "/store", "/ws", 12)
    events.phase("explore")
    clock.now += 90
    events.heartbeat()
    assert out.getvalue().splitlines()[-1] == "-- explore: run 12/40 building, 1m30s elapsed"


def test_the_thread_writes_while_the_campaign_is_silent_and_stops_with_it():
    out = io.StringIO()
    with ConsoleEvents(out, bar=False, planned=5, heartbeat_s=0.05) as events:
        events.phase("explore")
        deadline = time.monotonic() + 30
        while "building" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "-- explore: run 0/5 building" in out.getvalue()
    assert not any(t.name == "buildfuzz-heartbeat" for t in threading.enumerate())


def test_no_heartbeat_on_a_terminal_or_when_quiet():
    for kwargs in ({"bar": True}, {"bar": False, "quiet": True}):
        out = io.StringIO()
        with ConsoleEvents(out, heartbeat_s=0.01, **kwargs) as events:
            assert events._beating is None
        assert "building" not in out.getvalue() and "working" not in out.getvalue()
