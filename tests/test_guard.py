import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from fuzzer.execute.guard import BuildExit, Guard, GuardError

HELPERS = Path(__file__).parent / "helpers"
ENV = {"PATH": os.environ["PATH"]}
# a daemon that double-forks into its own session: `setsid` execs `sleep 37` in a child
# of a subshell that exits at once, so the sleep is orphaned and reparents to the guard
DAEMON = "( setsid sleep 37 & )"


@pytest.fixture
def guard():
    with Guard() as g:
        yield g


def start(guard, script, tmp_path, cpus=None):
    return guard.start(["sh", "-c", script], cwd=str(tmp_path), env=ENV, cpus=cpus, log_path=str(tmp_path / "log"))


def wait_for(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise AssertionError("condition not met in time")


def wait_for_tree(guard, size, daemon=False):
    """The build's processes, once there are `size` of them (the daemon among them, if asked)."""

    def ready():
        processes = guard.processes()
        return len(processes) == size and (not daemon or "sleep 37" in commands(processes)) and processes

    return wait_for(ready)


def commands(processes):
    found = []
    for p in processes:
        try:
            found.append(" ".join(p.cmdline()))
        except psutil.Error:
            pass
    return found


def survivors(processes):
    """The given processes still running (psutil compares create times: no pid-reuse mixups)."""
    alive = []
    for p in processes:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                alive.append((p.pid, p.status()))
        except psutil.Error:
            pass
    return alive


def test_wait_returns_the_exit_code_and_the_log_holds_both_streams(guard, tmp_path):
    start(guard, "echo out; echo err >&2; exit 3", tmp_path)
    assert guard.wait(5) == BuildExit(exit_code=3, timed_out=False, stragglers=0)
    assert (tmp_path / "log").read_text().split() == ["out", "err"]


def test_build_gets_exactly_the_given_env_and_cwd(guard, tmp_path):
    guard.start(["sh", "-c", 'echo "$MARK $HOME"; pwd'], cwd=str(tmp_path), env={**ENV, "MARK": "m"}, cpus=None,
                log_path=str(tmp_path / "log"))
    assert guard.wait(5).exit_code == 0
    assert (tmp_path / "log").read_text().splitlines() == ["m ", str(tmp_path)]


def test_death_by_signal_is_a_negative_exit_code(guard, tmp_path):
    start(guard, "kill -TERM $$", tmp_path)
    assert guard.wait(5) == BuildExit(exit_code=-signal.SIGTERM, timed_out=False, stragglers=0)


def test_affinity_is_applied_before_exec_and_inherited(guard, tmp_path):
    cpu = max(os.sched_getaffinity(0))
    start(guard, f'nproc; "{sys.executable}" -c "import os; print(sorted(os.sched_getaffinity(0)))"', tmp_path, (cpu,))
    assert guard.wait(5).exit_code == 0
    assert (tmp_path / "log").read_text().splitlines() == ["1", f"[{cpu}]"]
    start(guard, "nproc", tmp_path)  # no set: the fuzzer's own, and the guard restored its own
    guard.wait(5)
    assert (tmp_path / "log").read_text().strip() == str(len(os.sched_getaffinity(0)))


def test_processes_lists_the_tree_including_orphans_but_never_the_guard(guard, tmp_path):
    assert guard.processes() == []
    root = start(guard, f"sleep 30 & {DAEMON}; sleep 30", tmp_path)
    processes = wait_for_tree(guard, 4, daemon=True)
    pids = {p.pid for p in processes}
    guard_pids = {p.pid for p in psutil.Process().children()}
    assert root in pids and not pids & guard_pids
    daemon = next(p for p in processes if p.cmdline() == ["sleep", "37"])
    assert os.getsid(daemon.pid) != os.getsid(root) and daemon.ppid() in guard_pids
    guard.kill()
    assert guard.processes() == []


def test_timeout_kills_the_tree_including_a_daemon_and_stopped_processes(guard, tmp_path):
    start(guard, f"sleep 30 & {DAEMON}; sleep 30", tmp_path)
    processes = wait_for_tree(guard, 4, daemon=True)
    processes[0].suspend()
    processes[-1].suspend()
    started = time.monotonic()
    assert guard.wait(0.3) == BuildExit(exit_code=None, timed_out=True, stragglers=0)
    assert time.monotonic() - started < 1.3
    assert survivors(processes) == []


def test_stragglers_are_counted_and_killed_when_the_root_exits(guard, tmp_path):
    start(guard, f"sleep 30 & sleep 30 & {DAEMON}; sleep 0.5; exit 0", tmp_path)
    processes = wait_for_tree(guard, 5, daemon=True)
    assert guard.wait(5) == BuildExit(exit_code=0, timed_out=False, stragglers=3)
    assert survivors(processes) == []
    assert guard.processes() == []


def test_wait_returns_promptly_and_the_guard_costs_little(guard, tmp_path):
    start(guard, "true", tmp_path)
    guard.wait(5)  # the first run pays for the guard process's startup
    runs, started = 20, time.perf_counter()
    for _ in range(runs):
        start(guard, "true", tmp_path)
        assert guard.wait(5).exit_code == 0
    assert (time.perf_counter() - started) / runs < 0.05  # a run of `true` costs ~1 ms here


def test_kill_is_idempotent_and_resumes_stopped_processes(guard, tmp_path):
    guard.kill()  # idle: nothing to do
    root = start(guard, "sleep 30 & sleep 30", tmp_path)
    processes = wait_for_tree(guard, 3)
    os.kill(root, signal.SIGSTOP)
    guard.kill()
    assert survivors(processes) == []
    guard.kill()
    with pytest.raises(RuntimeError):
        guard.wait(1)
    start(guard, "exit 5", tmp_path)  # usable again
    assert guard.wait(5).exit_code == 5


def test_start_errors_are_raised_and_leave_the_guard_usable(guard, tmp_path):
    with pytest.raises(FileNotFoundError):
        guard.start(["/nonexistent/cc"], cwd=str(tmp_path), env=ENV, cpus=None, log_path=str(tmp_path / "log"))
    with pytest.raises(OSError):
        guard.start(["true"], cwd=str(tmp_path / "missing"), env=ENV, cpus=None, log_path=str(tmp_path / "log"))
    start(guard, "sleep 30", tmp_path)
    with pytest.raises(RuntimeError):
        start(guard, "true", tmp_path)  # one build at a time
    guard.kill()
    start(guard, "exit 0", tmp_path)
    assert guard.wait(5).exit_code == 0


def test_close_kills_the_build_stops_the_guard_and_is_idempotent(tmp_path):
    guard = Guard()
    start(guard, f"sleep 30 & {DAEMON}; sleep 30", tmp_path)
    processes = wait_for_tree(guard, 4, daemon=True)
    guard_process = psutil.Process(guard._proc.pid)
    guard.close()
    guard.close()
    guard.kill()
    assert survivors(processes + [guard_process]) == []
    with pytest.raises(GuardError):
        start(guard, "true", tmp_path)


def test_a_terminated_guard_kills_its_build_first(guard, tmp_path):
    start(guard, f"sleep 30 & {DAEMON}; sleep 30", tmp_path)
    processes = wait_for_tree(guard, 4, daemon=True)
    os.kill(guard._proc.pid, signal.SIGTERM)
    with pytest.raises(GuardError):
        guard.wait(5)
    assert wait_for(lambda: survivors(processes) == [], timeout=2)


def test_if_the_guard_itself_is_killed_the_fuzzer_kills_what_it_last_saw(guard, tmp_path):
    start(guard, f"sleep 30 & {DAEMON}; sleep 30", tmp_path)
    processes = wait_for_tree(guard, 4, daemon=True)
    os.kill(guard._proc.pid, signal.SIGKILL)
    with pytest.raises(GuardError):
        guard.wait(5)
    assert wait_for(lambda: survivors(processes) == [], timeout=2)


# ---------------------------------------------------------------- the proof: the fuzzer dies


def read_reports(stream, until, timeout=10.0):
    """Parse the stand-in's JSON lines until `until(report)` holds; return that report."""
    fd, buffer = stream.fileno(), b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            data = os.read(fd, 65536)
            assert data, "the stand-in fuzzer exited early"
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                report = json.loads(line)
                if until(report):
                    return report
    raise AssertionError("the stand-in fuzzer never reached the expected state")


def ready(report):
    commands = [c for _, c, _, _ in report["processes"]]
    return report["stops"] >= 1 and commands.count("sleep 30") == 4 and "sleep 37" in commands


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT], ids=["SIGKILL", "SIGTERM", "SIGINT"])
def test_when_the_fuzzer_dies_no_build_process_survives_or_stays_stopped(sig):
    fuzzer = subprocess.Popen([sys.executable, str(HELPERS / "fuzzer_standin.py")], stdout=subprocess.PIPE,
                              start_new_session=True)
    try:
        report = read_reports(fuzzer.stdout, ready)
        tree = psutil.Process(fuzzer.pid).children(recursive=True)  # the guard and the whole build
        build = [p for p in tree if p.pid in {pid for pid, *_ in report["processes"]}]
        daemon = next(p for p in build if p.cmdline() == ["sleep", "37"])
        assert os.getsid(daemon.pid) != os.getsid(build[0].pid)
        # like a jitter stop that nobody will ever resume: the fuzzer dies first
        daemon.suspend()
        build[-1].suspend()
        fuzzer.send_signal(sig)
        fuzzer.wait(5)
        deadline = time.monotonic() + 5
        while survivors(tree) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert survivors(tree) == []
    finally:
        fuzzer.kill()
        fuzzer.wait()
        fuzzer.stdout.close()
