"""Faults around the store: two campaigns on one store, resuming under other settings,
and `explain` re-rendering a stored report without building.

Builds here are tiny shell commands that count themselves in a file outside the
workspace; a build that must hold the store waits for a gate file the test creates, so
no test depends on how fast the machine is.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

import psutil
import pytest

from conftest import buildfuzz
from fuzzer.plan import format_cpus


SAFETY_S = 120  # only ever reached when something hangs


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "src"
    path.mkdir()
    return path


@pytest.fixture
def started():
    """Start buildfuzz processes; whatever a test leaves running is ended (by pid) afterwards."""
    procs = []

    def start(*args):
        proc = subprocess.Popen([sys.executable, "-m", "fuzzer", *map(str, args)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def build(tmp_path, gated_after: int) -> list[str]:
    """Write `out`, count the build in tmp_path/builds; builds after the first `gated_after`
    wait until tmp_path/gate exists."""
    count, gate = tmp_path / "builds", tmp_path / "gate"
    script = (f"echo x > out; echo b >> {count}; "
              f"if [ $(wc -l < {count}) -gt {gated_after} ]; then while [ ! -e {gate} ]; do sleep 0.05; done; fi")
    return ["sh", "-c", script]


def builds_so_far(tmp_path) -> int:
    path = tmp_path / "builds"
    return len(path.read_text().splitlines()) if path.exists() else 0


def query(store, statement):
    with closing(sqlite3.connect(store / "buildfuzz.sqlite")) as db:
        return db.execute(statement).fetchall()


def first_to_end(procs):
    deadline = time.monotonic() + SAFETY_S
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                return proc
        time.sleep(0.05)
    raise AssertionError("neither campaign ended")


def assert_usage_error(returncode, stderr, *words):
    assert returncode == 2, stderr
    assert "Traceback" not in stderr
    line = stderr.strip().splitlines()[-1]
    assert line.startswith("buildfuzz: error:") and all(w in line for w in words), stderr


@pytest.mark.parametrize("apart_s", [0.3, 1.5])
def test_two_campaigns_on_one_store_one_runs_the_other_is_refused(tmp_path, source, started, apart_s):
    store = tmp_path / "s"
    command = build(tmp_path, gated_after=0)  # every build waits: whoever holds the store keeps it
    first = started("run", "--source", source, "--store", store, "--runs", "4", "--no-localize",
                    "--report-json", tmp_path / "first.json", "--", *command)
    time.sleep(apart_s)
    second = started("run", "--source", source, "--store", store, "--runs", "4", "--no-localize",
                     "--report-json", tmp_path / "second.json", "--", *command)
    loser = first_to_end([first, second])
    winner = second if loser is first else first
    assert_usage_error(loser.wait(), loser.communicate()[1], "in use by another buildfuzz", f"pid {winner.pid}")
    assert winner.poll() is None, "the refused campaign ended only after the other one"
    replay = buildfuzz("replay", "--store", store, "--run", "0")
    assert_usage_error(replay.returncode, replay.stderr, "in use")
    explain = buildfuzz("explain", "--store", store)
    assert_usage_error(explain.returncode, explain.stderr, "no report yet", f"pid {winner.pid}")

    (tmp_path / "gate").touch()
    out, err = winner.communicate(timeout=SAFETY_S)
    assert winner.returncode == 0, out + err
    report = json.loads((tmp_path / ("first.json" if winner is first else "second.json")).read_text())
    assert report["verdict"] == "reproducible" and len(report["runs"]) == 4
    assert all(run["status"] == "ok" for run in report["runs"])
    assert query(store, "SELECT count(*) FROM campaigns") == [(1,)]
    assert builds_so_far(tmp_path) == 4


def test_a_campaign_ended_during_its_reference_build_leaves_no_campaign_row(tmp_path, source, started):
    store = tmp_path / "s"
    proc = started("run", "--source", source, "--store", store, "--runs", "3", "--no-localize", "--",
                   *build(tmp_path, gated_after=0))
    deadline = time.monotonic() + SAFETY_S
    while builds_so_far(tmp_path) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert query(store, "SELECT count(*) FROM campaigns") == [(1,)]  # while the reference builds
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=SAFETY_S)
    assert proc.returncode == 4, err
    assert query(store, "SELECT count(*) FROM campaigns") == [(0,)]


def kill_after_first_run(tmp_path, source, started, store) -> tuple[list, list[str]]:
    """A campaign SIGKILLed while run 1 builds: stored, unfinished, one run. Its options and command."""
    options = ["--source", source, "--store", store, "--runs", "4", "--seed", "3", "--jobs", "1-4", "--no-localize"]
    command = build(tmp_path, gated_after=1)
    proc = started("run", *options, "--", *command)
    deadline = time.monotonic() + SAFETY_S
    while builds_so_far(tmp_path) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert builds_so_far(tmp_path) == 2, "run 1 never started"
    builders = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    _, alive = psutil.wait_procs(builders, timeout=30)
    assert not alive, f"build processes outlived buildfuzz: {alive}"
    assert query(store, "SELECT idx FROM runs WHERE label = ''") == [(0,)]
    return options, command


def test_resume_under_other_settings_is_refused_then_resumes_under_its_own(tmp_path, source, started):
    store = tmp_path / "s"
    options, command = kill_after_first_run(tmp_path, source, started, store)
    stored_config = query(store, "SELECT config FROM campaigns")
    changes = [
        (["--jobs", "1-3"], "--jobs 1-4 → 1-3"),
        (["--no-jitter"], "jobs,cpus,jitter,shuffle,dirorder,hold → jobs,cpus,shuffle"),
        (["--no-affinity"], "--axes"),
        (["--axes", "jobs"], "--axes"),
        (["--artifact", "out"], "--artifact none → out"),
        (["--ignore", "*.log"], "--ignore"),
        (["--timeout", "60"], "--timeout none → 60"),
    ]
    for change, words in changes:
        r = buildfuzz("run", "--resume", *options, *change, "--", *command)  # the last --jobs counts
        assert_usage_error(r.returncode, r.stderr, "campaign 1 ran with other settings", words)
    if len(os.sched_getaffinity(0)) > 1:  # the schedule draws CPU sets from the CPUs it may use
        one_cpu = subprocess.run([sys.executable, "-m", "fuzzer", "run", "--resume", *map(str, options), "--",
                                  *command], preexec_fn=lambda: os.sched_setaffinity(0, {0}),
                                 capture_output=True, text=True, timeout=SAFETY_S)
        assert_usage_error(one_cpu.returncode, one_cpu.stderr, "CPUs available",
                           f"{format_cpus(sorted(os.sched_getaffinity(0)))} → 0)")
    r = buildfuzz("explain", "--store", store)
    assert_usage_error(r.returncode, r.stderr, "no stored report", "--relocalize", "--resume")
    assert builds_so_far(tmp_path) == 2, "a refused resume built"
    assert query(store, "SELECT config FROM campaigns") == stored_config

    (tmp_path / "gate").touch()
    # --runs may change on resume, and the new bound is recorded
    r = buildfuzz("run", "--resume", *options, "--runs", "5", "--", *command)
    assert r.returncode == 0, r.stderr
    assert query(store, "SELECT idx FROM runs WHERE label = ''") == [(i,) for i in range(5)]
    assert json.loads(query(store, "SELECT config FROM campaigns")[0][0])["runs"] == 5
    assert query(store, "SELECT count(*) FROM campaigns") == [(1,)]


def test_explain_renders_the_stored_report_without_building(tmp_path, source):
    store = tmp_path / "s"
    # the nanosecond clock: every build differs
    command = ["sh", "-c", f"date +%s%N > out; echo b >> {tmp_path / 'builds'}"]
    run = buildfuzz("run", "--source", source, "--store", store, "--runs", "3", "--no-localize",
                    "--report-json", tmp_path / "run.json", "--", *command)
    assert run.returncode == 1, run.stderr
    assert builds_so_far(tmp_path) == 3

    again = buildfuzz("explain", "--store", store, "--report-json", tmp_path / "again.json",
                      "--markdown", tmp_path / "again.md")
    assert again.returncode == 1, again.stderr
    assert builds_so_far(tmp_path) == 3, "explain built"
    assert json.loads((tmp_path / "again.json").read_text()) == json.loads((tmp_path / "run.json").read_text())
    assert "out" in (tmp_path / "again.md").read_text()
    assert "UNREPRODUCIBLE" in again.stdout


@pytest.mark.needs("strace")  # localization traces builds
def test_explain_relocalize_traces_again_and_stores_the_new_report(tmp_path, source):
    store = tmp_path / "s"
    command = ["sh", "-c", f"date +%s%N > out; echo b >> {tmp_path / 'builds'}"]
    run = buildfuzz("run", "--source", source, "--store", store, "--runs", "2", "--no-localize", "--", *command)
    assert run.returncode == 1, run.stderr

    relocalized = buildfuzz("explain", "--relocalize", "--store", store, "--report-json", tmp_path / "new.json")
    assert relocalized.returncode == 1, relocalized.stderr
    assert builds_so_far(tmp_path) > 2, "--relocalize ran no traced build"
    new = json.loads((tmp_path / "new.json").read_text())
    assert new["localized"] and new["culprits"], new["notes"]

    shown = buildfuzz("explain", "--store", store, "--report-json", tmp_path / "shown.json")
    assert shown.returncode == 1
    assert json.loads((tmp_path / "shown.json").read_text()) == new
