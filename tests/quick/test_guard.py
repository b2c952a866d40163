import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from conftest import ROOT

from fuzzer.execute import guard as guard_module
from fuzzer.execute import jitter as jitter_module
from fuzzer.execute.guard import BuildExit, FreezeWatch, Guard, GuardError, _Sample
from fuzzer.execute.jitter import Jitter
from fuzzer.execute.local import BuildSpec, LocalExecutor, default_timeout
from fuzzer.execute.procfs import members as _members
from fuzzer.execute.run import RunRequest
from fuzzer.execute.workspace import Workspace
from fuzzer.model import RunStatus
from fuzzer.plan import Perturbation


HELPERS = ROOT / "tests" / "helpers"


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
    end = guard.wait(0.3)
    assert end == BuildExit(exit_code=None, timed_out=True, stragglers=0, note=end.note)
    assert "timeout of 0.3 s" in end.note
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
    with pytest.raises(GuardError, match=r"killed by SIGKILL\); buildfuzz killed the 4 build process"):
        guard.wait(5)
    assert survivors(processes) == []
    assert not guard.alive


def by_command(text):
    """Processes on the machine whose command line is exactly `text` (the tests' markers)."""
    found = []
    for p in psutil.process_iter():
        try:
            if " ".join(p.cmdline()) == text:
                found.append(p)
        except psutil.Error:
            pass
    return found


def test_guard_sigkilled_mid_run_is_a_failed_run_and_no_build_process_outlives_it(tmp_path):
    # the daemon leads its own session and has a child of its own; nothing of it may survive
    markers = ["sleep 3141", "sleep 3142", "sleep 3143", "sleep 3144"]
    script = "( setsid sh -c 'sleep 3141 & sleep 3142' & ); sleep 3143 & sleep 3144"
    source = tmp_path / "src"
    source.mkdir()
    spec = BuildSpec(f"sh -c \"{script}\"", Workspace(source, tmp_path / "ws"), tmp_path / "logs")
    build: list[psutil.Process] = []

    def tree_up():
        found = [p for marker in markers for p in by_command(marker)]
        return len(found) == len(markers) and found

    def kill_the_guard_once_the_tree_is_up():
        build.extend(wait_for(tree_up, timeout=10))
        time.sleep(guard_module.WATCH_TICK * 2)  # the fuzzer has listed the tree by now
        os.kill(guard_pid, signal.SIGKILL)

    with LocalExecutor(spec) as executor:
        guard_pid = executor.guard._proc.pid
        killer = threading.Thread(target=kill_the_guard_once_the_tree_is_up)
        killer.start()
        record = executor.run(RunRequest(1, Perturbation(1, None, 0.0, 0)))
        killer.join()
        assert record.status is RunStatus.FAILED and record.exit_code is None
        assert "the guard process died (killed by SIGKILL)" in record.log_tail
        assert survivors(build) == []
        executor.spec = BuildSpec("true", spec.workspace, spec.logs)
        assert executor.run(RunRequest(2, Perturbation(1, None, 0.0, 0))).ok  # a fresh guard runs builds again
        assert executor.guard._proc.pid != guard_pid


def test_the_sweep_finds_seen_processes_session_members_and_their_descendants():
    table = {  # pid: (ppid, session, state)
        1: (0, 1, b"S"),  # init
        10: (1, 10, b"S"),  # a stranger
        11: (10, 10, b"S"),  # its child
        20: (1, 20, b"S"),  # seen build process, orphaned
        21: (20, 21, b"S"),  # its child in a session of its own, never seen
        22: (21, 21, b"Z"),  # a zombie: already dead
        30: (1, 30, b"T"),  # in a build session, never seen, stopped
        31: (1, 30, b"S"),  # ditto, orphaned
    }
    assert _members(table, seen={20}, sessions={30}) == {20, 21, 30, 31}
    assert _members(table, seen=set(), sessions=set()) == set()


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


# ---------------------------------------------------------------- builds that stop themselves


def look(state="S", cpu=0, start=1):
    return _Sample(state, (start, cpu))


def test_a_frozen_tree_is_resumed_once_then_ended():
    freeze, watch = guard_module.FREEZE_S, FreezeWatch()
    tree = {1: look(), 2: look("T")}  # a driver waiting on a job that stopped itself
    assert watch.look(0.0, tree, frozenset()) is None
    assert watch.look(freeze - 0.01, tree, frozenset()) is None and watch.note == ""
    assert watch.look(freeze, tree, frozenset()) == FreezeWatch.RESUME and watch.stopped == [2]
    assert watch.note.endswith("resumed once")
    assert watch.look(freeze + 1, tree, frozenset()) is None  # the clock starts again
    assert watch.look(2 * freeze, tree, frozenset()) is None
    assert watch.look(2 * freeze + 1, tree, frozenset()) == FreezeWatch.END
    assert watch.note == "build stopped itself (SIGSTOP); resumed once, stopped again: ended"


@pytest.mark.parametrize("change", ["cpu", "new process", "jitter", "nothing stopped"])
def test_progress_or_jitter_stops_are_never_a_freeze(change):
    watch = FreezeWatch()
    for step in range(50):
        now = step * guard_module.FREEZE_S / 10
        tree = {1: look(cpu=step if change == "cpu" else 0), 2: look("S" if change == "nothing stopped" else "T")}
        if change == "new process":
            tree[100 + step] = look()
        jitter_stopped = frozenset({2}) if change == "jitter" else frozenset()
        assert watch.look(now, tree, jitter_stopped) is None
    assert watch.note == ""


@pytest.fixture
def quick_freeze(monkeypatch):
    """Freezes noticed in 0.3 s instead of 2 s, so the tests below take about a second."""
    monkeypatch.setattr(guard_module, "FREEZE_S", 0.3)
    monkeypatch.setattr(guard_module, "WATCH_TICK", 0.05)


@pytest.mark.parametrize("script", ["while :; do kill -STOP $$; done",
                                    "sh -c 'while :; do kill -STOP $$; done'; echo unreachable"],
                         ids=["root", "a job the root waits for"])
def test_a_build_that_keeps_stopping_itself_is_ended_and_nothing_stays_stopped(guard, tmp_path, quick_freeze, script):
    start(guard, script, tmp_path)
    processes = wait_for(guard.processes)
    end = guard.wait(30)
    assert end == BuildExit(None, False, 0, "build stopped itself (SIGSTOP); resumed once, stopped again: ended")
    assert survivors(processes) == []
    assert "unreachable" not in (tmp_path / "log").read_text()


def test_a_build_that_stopped_itself_once_is_resumed_and_finishes(guard, tmp_path, quick_freeze):
    start(guard, "kill -STOP $$; echo resumed", tmp_path)
    end = guard.wait(30)
    assert (end.exit_code, end.timed_out, end.note) == (0, False, "build stopped itself (SIGSTOP) and nothing ran "
                                                                  "for 0.3 s: resumed once")
    assert (tmp_path / "log").read_text() == "resumed\n"


def test_a_stopped_process_is_left_alone_while_the_rest_of_the_build_runs(guard, tmp_path, quick_freeze):
    busy = f'"{sys.executable}" -c "import time; t = time.time() + 1.2\nwhile time.time() < t: pass"'
    start(guard, f"sh -c 'kill -STOP $$; echo resumed' & {busy}; echo busy done; kill -CONT $!; wait", tmp_path)
    end = guard.wait(30)
    assert (end.exit_code, end.note) == (0, "")
    assert (tmp_path / "log").read_text().split("\n") == ["busy done", "resumed", ""]


def test_the_jitter_engines_own_stops_are_not_taken_for_a_self_stopped_build(guard, tmp_path, quick_freeze,
                                                                              monkeypatch):
    # every jitter stop lasts twice the freeze delay, on an otherwise idle tree: were the
    # engine's stops not excluded, the watch would resume them (as the control below shows)
    monkeypatch.setattr(jitter_module, "MIN_WINDOW", 0.6)
    monkeypatch.setattr(jitter_module, "MAX_WINDOW", 0.6)

    def build(excluded):
        start(guard, "sleep 1.2", tmp_path)
        with Jitter(1.0, 5, guard.processes) as jitter:
            end = guard.wait(30, jitter.stopped_pids if excluded else frozenset)
        assert any(e.action == "stop" for e in jitter.events)
        return end

    assert build(excluded=True) == BuildExit(0, False, 0, "")
    assert "resumed once" in build(excluded=False).note  # the control: the setup does provoke the watch


# ---------------------------------------------------------------- the default timeout


def test_the_default_timeout_follows_the_reference_and_never_overrides_a_given_one():
    assert default_timeout(None, 45.0) == 450.0
    assert default_timeout(None, 0.5) == 300.0
    assert default_timeout(7.0, 100.0) == 7.0
