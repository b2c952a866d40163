import io
import re

from fuzzer.execute.run import RunRecord
from fuzzer.model import RunStatus
from fuzzer.plan import Perturbation
from fuzzer.report.progress import ConsoleEvents


def record(index, status=RunStatus.OK):
    return RunRecord(index, Perturbation(4, (0, 1), 0.5, 9), status, 0 if status is RunStatus.OK else 2, 1.5, None, "")


def test_plain_lines_for_logs():
    out = io.StringIO()
    events = ConsoleEvents(out, bar=False)
    events.run_finished(record(0), "A", 20)
    events.run_finished(record(1, RunStatus.FAILED), None, 20)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("run  0/20") and lines[0].endswith("group A  (reference)")
    assert "jobs=4 cpus=0-1 jitter=0.50/seed=9" in lines[1] and lines[1].rstrip().endswith("FAILED")
    assert "\r" not in out.getvalue() and "ETA" not in out.getvalue()


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_terminal_bar_with_eta():
    out = Terminal()  # click draws its bar on a terminal only
    events = ConsoleEvents(out, bar=True)
    for index in range(5):
        events.run_finished(record(index), "B", 10)
    assert "[" + "#" * 15 + "." * 15 + "] 5/10" in out.getvalue()
    assert "ETA     8s" in out.getvalue()  # 5 runs left at the mean 1.5 s


def test_the_eta_ends_with_the_budget_and_counts_parallel_builds():
    now = [0.0]
    budgeted, parallel = Terminal(), Terminal()
    events = [ConsoleEvents(budgeted, bar=True, budget_s=40, clock=lambda: now[0]),
              ConsoleEvents(parallel, bar=True, parallel=5, clock=lambda: now[0])]
    now[0] = 36.0
    for index in range(5):  # 5 runs left at the mean 1.5 s: 7.5 s of builds
        for e in events:
            e.run_finished(record(index), "B", 10)
    assert re.findall(r"ETA +(\d+)s", budgeted.getvalue())[-1] == "4"  # the budget ends first
    assert float(re.findall(r"ETA +(\d+)s", parallel.getvalue())[-1]) == round(7.5 / 5)


def test_quiet_prints_nothing():
    out = io.StringIO()
    events = ConsoleEvents(out, quiet=True)
    events.started(1, 2, "/store", "/ws", 0)
    events.run_finished(record(0), "A", 3)
    events.phase("explore")
    assert out.getvalue() == ""
