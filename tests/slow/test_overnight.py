"""Overnight use: budgets end in time, SIGKILLed campaigns resume without loss."""

import json
import signal
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

from conftest import buildfuzz, make_project



@pytest.fixture
def slow_project(tmp_path):
    """About 0.3 s a build, reproducible."""
    return make_project(tmp_path / "src", """
        all: out.txt
        out.txt:
            sleep 0.3; echo done > $@
        """)


def stored_runs(store):
    """Run indices stored so far ([] while buildfuzz is still creating the database)."""
    if not (store / "buildfuzz.sqlite").exists():
        return []
    with sqlite3.connect(store / "buildfuzz.sqlite") as db:
        try:
            return [row[0] for row in db.execute("SELECT idx FROM runs WHERE label = '' ORDER BY idx")]
        except sqlite3.OperationalError:  # the file exists, the schema not yet
            return []


def run_with_budget(tmp_path, source, budget_s, runs):
    """Run with a budget; return the result, the report, and how far past budget + one
    build the whole process (startup, hashing, localization, report) ended. The process's
    own start and end get 1 s plus what starting the CLI costs right now, measured: beside
    other pytest-xdist workers' builds that alone passed 1 s."""
    report = tmp_path / "r.json"
    started = time.monotonic()
    buildfuzz("--help")
    startup = time.monotonic() - started
    started = time.monotonic()
    r = buildfuzz("run", "--source", source, "--store", tmp_path / "s", "--runs", runs, "--budget", f"{budget_s}s",
                  "--report-json", report, "--", "make")
    elapsed = time.monotonic() - started
    data = json.loads(report.read_text())
    longest = max(run["wall_s"] for run in data["runs"])
    return r, data, elapsed - (budget_s + longest + 1.0 + startup)


@pytest.mark.alone
def test_budget_ends_within_budget_plus_one_build(tmp_path, slow_project):
    r, data, overshoot = run_with_budget(tmp_path, slow_project, 6, 100)
    assert r.returncode == 0
    assert data["exit_reason"] == "budget spent"
    assert 3 <= len(data["runs"]) < 100
    assert overshoot <= 0, overshoot


def test_resume_after_sigkill_neither_repeats_nor_loses_runs(tmp_path, slow_project):
    store = tmp_path / "s"
    args = [sys.executable, "-m", "fuzzer", "run", "--source", str(slow_project), "--store", str(store),
            "--runs", "8", "--seed", "5", "--no-localize", "--", "make"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if len(stored_runs(store)) >= 3:
                break
            time.sleep(0.05)
        before = stored_runs(store)
        assert len(before) >= 3
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with sqlite3.connect(store / "buildfuzz.sqlite") as db:
        perturbations = dict(db.execute("SELECT idx, perturbation FROM runs WHERE label = ''").fetchall())
    r = buildfuzz("run", "--source", slow_project, "--store", store, "--runs", "8", "--seed", "5", "--no-localize",
                  "--resume", "--report-json", tmp_path / "r.json", "--", "make")
    assert r.returncode == 0, r.stderr
    after = stored_runs(store)
    assert after == list(range(8))
    with sqlite3.connect(store / "buildfuzz.sqlite") as db:
        kept = dict(db.execute("SELECT idx, perturbation FROM runs WHERE label = ''").fetchall())
    assert all(kept[i] == perturbations[i] for i in perturbations), "completed runs were rewritten"
    assert f"resuming after {len(perturbations)} runs" in r.stderr
    assert len(json.loads((tmp_path / "r.json").read_text())["runs"]) == 8


def test_sigkill_mid_jitter_leaves_no_build_process(tmp_path):
    # the reference (-j1) is quick; run 1 (max jobs, heavy jitter) sleeps until killed
    src = make_project(tmp_path / "src", """
        all: a b c d
        a b c d:
            sleep $$(( $(J) > 1 ? 30 : 0 )); touch $@
        """)
    proc = subprocess.Popen([sys.executable, "-m", "fuzzer", "run", "--source", str(src), "--store",
                             str(tmp_path / "s"), "--runs", "3", "--jobs", "1-4", "--no-localize", "--",
                             "make -j{jobs} J={jobs}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    me = psutil.Process(proc.pid)
    build, stopped = {}, []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not stopped:
        for p in _all_descendants(me):
            build.setdefault(p.pid, p)
            if _status(p) == psutil.STATUS_STOPPED:
                stopped.append(p)
        time.sleep(0.005)
    assert stopped, "jitter never stopped a build process"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in build.values()):
        time.sleep(0.05)
    survivors = [(p.pid, _status(p)) for p in build.values() if _alive(p)]
    assert not survivors


def _status(p):
    try:
        return p.status()
    except psutil.NoSuchProcess:
        return None


def _all_descendants(proc):
    try:
        return proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _alive(p):
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_cleanly_and_still_reports(tmp_path, slow_project, signum):
    store, report = tmp_path / "s", tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "fuzzer", "run", "--source", str(slow_project), "--store",
                             str(store), "--runs", "50", "--report-json", str(report), "--", "make"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(stored_runs(store)) >= 2:
            break
        time.sleep(0.05)
    build = {p.pid: p for p in _all_descendants(psutil.Process(proc.pid))}
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 4, stderr  # no verdict: an interrupted campaign is never green
    assert "Traceback" not in stderr
    data = json.loads(report.read_text())
    assert data["exit_reason"] == "interrupted" and 2 <= len(data["runs"]) < 50
    assert data["verdict"] == "inconclusive"
    assert not [p for p in build.values() if _alive(p)]
    assert not any((store / "workspace").iterdir())


def test_ctrl_c_after_builds_differed_is_unreproducible_and_resumes(tmp_path):
    """Issue 31: a Ctrl-C while drawn builds run, once one differed, keeps the verdict (exit 1,
    what was cut in a note), leaves no build running, and `--resume` builds the rest."""
    source = make_project(tmp_path / "src", """
        all: out.txt
        out.txt:
            sleep 0.3; date +%s%N > $@
        """)
    store, report = tmp_path / "s", tmp_path / "r.json"
    args = ["run", "--source", str(source), "--store", str(store), "--runs", "12", "--seed", "1", "--no-localize",
            "--report-json", str(report), "--", "make"]
    proc = subprocess.Popen([sys.executable, "-m", "fuzzer", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(stored_runs(store)) < 3:  # the reference and two that differ
        time.sleep(0.05)
    build = {p.pid: p for p in _all_descendants(psutil.Process(proc.pid))}
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    data = json.loads(report.read_text())
    assert (data["verdict"], data["exit_reason"]) == ("unreproducible", "interrupted")
    assert 3 <= len(data["runs"]) < 12 and not data["localized"]
    assert not [p for p in build.values() if _alive(p)]
    assert not any((store / "workspace").iterdir())
    resumed = buildfuzz(*args[:-2], "--resume", "--", "make")
    again = json.loads(report.read_text())
    assert resumed.returncode == 1, resumed.stderr
    assert again["campaign"] == data["campaign"] and len(again["runs"]) == 12 and again["exit_reason"] != "interrupted"


@pytest.mark.alone
def test_budget_holds_with_localization(tmp_path, nproc_project):
    r, data, overshoot = run_with_budget(tmp_path, nproc_project, 8, 500)
    assert r.returncode == 1 and data["culprits"], r.stderr
    assert overshoot <= 0, (overshoot, data["phases"])
