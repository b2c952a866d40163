"""Hostile input and faults: every bad command line or scenario file gets one line and
exit 2 before anything is built or created; no input ends in a traceback; a signal at
any phase gives "no verdict" (exit 4), never a green, and leaves no process behind.

The table and fuzz tests run the real command line in-process (`cli.run_cli`): the
validation they exercise happens before any build, and whatever gets past it builds
`true`, so they stay in the quick subset.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest


# --- faults: a signal at each phase ------------------------------------------------------------

def start_campaign(tmp_path: Path, command: str, *extra: str) -> tuple[subprocess.Popen, Path]:
    """buildfuzz run on an empty source; `command` appends a line to `starts` per build."""
    (tmp_path / "src").mkdir()
    (tmp_path / "starts").touch()
    args = [sys.executable, "-m", "fuzzer", "run", "--source", str(tmp_path / "src"), "--store",
            str(tmp_path / "s"), "--report-json", str(tmp_path / "r.json"), *extra, "--", "sh", "-c", command]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), tmp_path / "starts"


def wait_for_builds(starts: Path, count: int) -> list[int]:
    """The shell pids of the builds started so far, once `count` have started."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pids = [int(line) for line in starts.read_text().split()]
        if len(pids) >= count:
            time.sleep(0.2)  # let the build reach its sleep
            return pids
        time.sleep(0.05)
    raise AssertionError(f"only {starts.read_text().count(chr(10))} builds started")


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def interrupt(proc: subprocess.Popen, signum: int) -> tuple[str, str, list[psutil.Process]]:
    """Signal buildfuzz; its output, and every process it had below it at that moment."""
    below = descendants(proc.pid)
    assert below, "no build process was running"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    return out, err, below


def alive(processes: list[psutil.Process]) -> list[int]:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        living = [p.pid for p in processes if _running(p)]
        if not living:
            return []
        time.sleep(0.05)
    return living


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# the Nth build (counting from 1) sleeps; the others finish at once with distinct output
SLEEP_AT = "n=$(wc -l < {starts}); echo $$ >> {starts}; date +%s%N > out; [ $n -eq {n} ] && exec sleep 60; true"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("build, phase", [(0, "run 0"), (1, "run 1")])
def test_signal_during_a_run_gives_no_verdict(tmp_path, signum, build, phase):
    starts = tmp_path / "starts"
    proc, _ = start_campaign(tmp_path, SLEEP_AT.format(starts=starts, n=build), "--runs", "4", "--no-localize")
    wait_for_builds(starts, build + 1)
    out, err, below = interrupt(proc, signum)
    assert proc.returncode == 4, (phase, out, err)
    assert "REPRODUCIBLE" not in out and "Traceback" not in err
    assert "interrupted" in err
    assert not alive(below), f"build processes survived a signal during {phase}"
    if build == 1:  # the report says why there is no verdict, and it stays resumable
        assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "inconclusive"


@pytest.mark.needs("strace")  # localization traces builds
def test_sigterm_during_localization_keeps_the_builds_verdict(tmp_path):
    starts = tmp_path / "starts"
    # builds 0 and 1 differ (a timestamp); the first traced build (the third build) sleeps
    proc, _ = start_campaign(tmp_path, SLEEP_AT.format(starts=starts, n=2), "--runs", "2")
    wait_for_builds(starts, 3)
    out, err, below = interrupt(proc, signal.SIGTERM)
    assert proc.returncode == 1, out + err  # the builds differed: a signal after them takes nothing back
    data = json.loads((tmp_path / "r.json").read_text())
    assert (data["verdict"], data["exit_reason"], len(data["runs"])) == ("unreproducible", "all runs done", 2)
    assert data["divergent_artifacts"], "what was found before the signal is still reported"
    assert not data["culprits"]  # localization was cut short: nothing is claimed from it
    assert not alive(below)


def test_a_failed_reference_is_not_called_unreproducible(tmp_path):
    proc, starts = start_campaign(tmp_path, "echo $$ >> {}; exit 7".format(tmp_path / "starts"), "--runs", "3")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert "REFERENCE BUILD FAILED" in out and "UNREPRODUCIBLE" not in out
    assert "reference build failed (exit 7)" in err


def test_a_budget_too_small_for_two_builds_is_no_verdict(tmp_path):
    proc, starts = start_campaign(tmp_path, "echo $$ >> {}; sleep 1; date +%s%N > out".format(tmp_path / "starts"),
                                  "--runs", "5", "--budget", "1s")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 4, out + err
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["verdict"] == "inconclusive" and len(data["runs"]) == 1
    assert "at least 2" in err
