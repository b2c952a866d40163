import os
import subprocess
import time
from collections import defaultdict

import psutil
import pytest

from fuzzer.execute.guard import Guard
from fuzzer.execute import jitter as jitter_module
from fuzzer.execute.jitter import MAX_WINDOW, MIN_WINDOW, Jitter

ENV = {"PATH": os.environ["PATH"]}


@pytest.fixture
def guard():
    with Guard() as g:
        yield g


def start(guard, script, tmp_path):
    return guard.start(["sh", "-c", script], cwd=str(tmp_path), env=ENV, cpus=None, log_path=str(tmp_path / "log"))


def wait_for_processes(guard, count):
    deadline = time.monotonic() + 5
    while len(processes := guard.processes()) < count:
        assert time.monotonic() < deadline, "the build never started its processes"
        time.sleep(0.005)
    return processes


def statuses(processes):
    found = []
    for p in processes:
        try:
            found.append(p.status())
        except psutil.Error:
            pass
    return found


def sleepers(n):
    procs = [subprocess.Popen(["sleep", "30"]) for _ in range(n)]
    return procs, [psutil.Process(p.pid) for p in procs]


def reap(procs):
    for p in procs:
        p.kill()
        p.wait()


def test_intensity_zero_does_nothing(guard, tmp_path):
    calls = []
    start(guard, "sleep 30 & sleep 30", tmp_path)
    processes = wait_for_processes(guard, 3)
    with Jitter(0.0, 1, lambda: calls.append(1) or processes) as jitter:
        time.sleep(0.1)
        assert psutil.STATUS_STOPPED not in statuses(processes)
    assert jitter.events == () and calls == []
    assert [p.nice() for p in processes] == [0, 0, 0]


def test_intensity_must_be_within_0_and_1():
    with pytest.raises(ValueError):
        Jitter(1.5, 1, list)


def test_events_are_recorded_short_jobs_are_caught_and_everything_is_resumed(guard, tmp_path):
    root = start(guard, "for i in 1 2 3; do sleep 30 & done; while :; do sleep 0.05; done", tmp_path)
    long_lived = wait_for_processes(guard, 4)
    started = time.monotonic()
    with Jitter(1.0, 3, guard.processes) as jitter:
        time.sleep(0.8)
        seen = guard.processes()
    elapsed = time.monotonic() - started
    events = jitter.events
    stops = [e for e in events if e.action == "stop"]
    nices = [e for e in events if e.action == "nice"]
    assert stops and nices
    assert all(MIN_WINDOW <= e.value <= MAX_WINDOW for e in stops)
    assert all(0 < e.value <= 19 for e in nices)
    assert all(0 <= e.at <= elapsed and e.command for e in events)
    assert [e.at for e in events] == sorted(e.at for e in events)
    assert any(e.command == "sleep 0.05" for e in stops)  # short-lived jobs get caught too
    assert root not in {e.pid for e in nices}  # its children would all inherit it
    assert psutil.STATUS_STOPPED not in statuses(long_lived + seen)
    guard.kill()


@pytest.mark.alone
@pytest.mark.parametrize("intensity, cap, at_once", [(0.6, 0.3, 2), (0.4, 0.2, 1)])
def test_stopped_share_and_concurrency_stay_under_the_caps(intensity, cap, at_once, monkeypatch):
    # A stop may overdraw the time budget by its own window; short windows keep that
    # overdraft small against 1.5 s, and a high rate makes the demand far exceed the cap.
    monkeypatch.setattr(jitter_module, "MAX_WINDOW", 0.05)
    monkeypatch.setattr(jitter_module, "STOP_RATE", 50.0)
    procs, processes = sleepers(4)
    samples = []
    try:
        with Jitter(intensity, 11, lambda: processes):
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                samples.append(statuses(processes).count(psutil.STATUS_STOPPED))
                time.sleep(0.002)
        # a sample reads the processes one by one, so a resume-then-stop can be seen as two
        # stopped at once; a real excess would last beyond the next sample
        assert max(min(pair) for pair in zip(samples, samples[1:])) <= at_once
        share = sum(samples) / len(samples)  # stopped processes on average = stopped time / wall time
        # the margin covers the 0.1 s head start, one overdraft per slot and resumes that come
        # late on a loaded machine; without the cap the share would approach `at_once`
        assert cap / 2 < share <= cap + 0.1
        assert psutil.STATUS_STOPPED not in statuses(processes)
    finally:
        reap(procs)


def decisions(seed):
    """Per process, in arrival order: the engine's actions on three fresh sleepers."""
    procs, processes = sleepers(3)
    try:
        with Jitter(1.0, seed, lambda: processes) as jitter:
            time.sleep(0.4)
    finally:
        reap(procs)
    arrival = {p.pid: i for i, p in enumerate(sorted(processes, key=lambda p: (p.create_time(), p.pid)))}
    per_process = defaultdict(list)
    for e in jitter.events:
        per_process[arrival[e.pid]].append((e.action, e.value))
    return per_process


def test_same_seed_makes_the_same_decisions_for_the_same_arrivals():
    first, second, other = decisions(5), decisions(5), decisions(6)
    assert sum(map(len, first.values())) >= 3
    for i in range(3):
        # timing decides how far each process got; the decisions themselves must agree
        n = min(len(first[i]), len(second[i]))
        assert first[i][:n] == second[i][:n]
    assert first != other


def test_vanishing_and_zombie_processes_cause_no_error(guard, tmp_path):
    gone = subprocess.Popen(["sleep", "30"])
    gone_process = psutil.Process(gone.pid)
    reap([gone])
    zombie = subprocess.Popen(["true"])
    zombie_process = psutil.Process(zombie.pid)
    procs, live = sleepers(1)
    flaky = iter(range(10**6))

    def processes():
        if next(flaky) % 7 == 0:
            raise psutil.NoSuchProcess(1)
        return [gone_process, zombie_process] + live + guard.processes()

    # the build forks constantly, so processes also vanish between listing and signalling
    start(guard, "while :; do true; true; sleep 0.001; done", tmp_path)
    try:
        with Jitter(1.0, 2, processes) as jitter:
            time.sleep(0.5)
        assert jitter.events
        assert psutil.STATUS_STOPPED not in statuses(live)
    finally:
        guard.kill()
        reap(procs + [zombie])


def test_excluded_processes_are_never_touched():
    procs, processes = sleepers(3)
    excluded = processes[1].pid
    try:
        with Jitter(1.0, 4, lambda: processes, exclude=lambda: {excluded}) as jitter:
            time.sleep(0.4)
        assert jitter.events and excluded not in {e.pid for e in jitter.events}
    finally:
        reap(procs)


def test_stopped_pids_holds_every_process_the_engine_has_stopped(monkeypatch):
    # the guard's self-stop check trusts this: a process the engine stopped is always listed
    monkeypatch.setattr(jitter_module, "MIN_WINDOW", 0.05)  # stops outlast a sample by far
    procs, processes = sleepers(4)
    stopped_seen, violations = set(), []
    try:
        with Jitter(1.0, 8, lambda: processes) as jitter:
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                before = jitter.stopped_pids()
                stopped = {p.pid for p in processes if p.status() == psutil.STATUS_STOPPED}
                listed = before | jitter.stopped_pids()
                stopped_seen |= stopped
                violations += sorted(stopped - listed)
                time.sleep(0.003)
        assert stopped_seen and violations == []
        assert jitter.stopped_pids() == frozenset()
        assert {e.pid for e in jitter.events if e.action == "stop"} >= stopped_seen
    finally:
        reap(procs)
