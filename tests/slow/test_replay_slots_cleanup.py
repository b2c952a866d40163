"""Replay slots leave nothing behind: each slot's guard lives in the slot's mount namespace
(fuzzer/execute/replay_slots.py), and once the slots close, no process is left in any of
those namespaces (the guard, the replays, a daemon a replay started), no mount, no copy
of the tree; also when an error or a Ctrl-C ends the slots' work mid-replay.

Real processes and real namespaces (unshare -m as root, unshare -Urm either way)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import psutil
import pytest

from fuzzer.execute.replay_slots import ReplaySlots, in_slots
from fuzzer.execute.step_replay import StepCall, Variation
from fuzzer.tools import unshare
from fuzzer.tools.unshare import Isolation

WAYS = [Isolation(user_namespace=True)] + ([Isolation(user_namespace=False)] if os.geteuid() == 0 else [])

pytestmark = pytest.mark.needs("unshare")


def step(seen: Path, then: str) -> StepCall:
    """A step that starts a daemon in a session of its own, says outside the tree which mount
    namespace, uid and cwd it ran with and its pid, its guard's and the daemon's (the file
    appears whole: moved into place), then runs `then`."""
    script = (f"setsid sleep 300 < /dev/null > /dev/null 2>&1 & "
              f'echo "$(readlink /proc/self/ns/mnt) $(id -u) $(pwd) $$ $PPID $!" > {seen}/.ns-$$ && '
              f"mv {seen}/.ns-$$ {seen}/ns-$$; {then}")
    return StepCall(argv=("/bin/sh", "-c", script), cwd="sub", env={"PATH": os.environ["PATH"]}, exit_code=0,
                    restored=("sub/out",), compared=("sub/out",))


@pytest.fixture
def campaign(tmp_path: Path) -> tuple[Path, Path]:
    tree, seen = tmp_path / "campaign", tmp_path / "seen"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "out").write_text("traced\n")
    seen.mkdir()
    return tree, seen


def namespaces(seen: Path) -> set[str]:
    return {f.read_text().split()[0] for f in seen.glob("ns-*")}


def left_behind(tree: Path, seen: Path) -> list[str]:
    """What is still there of closed slots: the guards, replays and daemons the steps saw, in
    their slot's namespace still (a pid alone may be reused, and so may a dead namespace's
    number, by tests running beside this one), our children, mounts, copies."""
    left = []
    for line in (f.read_text().split() for f in seen.glob("ns-*")):
        for pid in line[3:]:
            try:
                if os.readlink(f"/proc/{pid}/ns/mnt") == line[0]:
                    left.append(f"pid {pid} ({psutil.Process(int(pid)).name()}) in a slot's namespace")
            except (OSError, psutil.Error):
                pass  # gone
    left += [f"child pid {p.pid}" for p in psutil.Process().children(recursive=True)]
    left += [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(tree.parent) in line]
    left += [str(p) for p in tree.parent.iterdir() if p.name.startswith(tree.name + ".")]
    return left


@pytest.mark.parametrize("way", WAYS, ids=lambda w: "user" if w.user_namespace else "root")
def test_closed_slots_leave_no_process_mount_or_copy(campaign, tmp_path, monkeypatch, way):
    tree, seen = campaign
    monkeypatch.setattr(unshare, "isolation", lambda: way)
    with ReplaySlots(tree, 2, tmp_path / "logs") as slots:
        assert slots.count == 4 and not slots.serial_reason

        def replay(item: int, k: int) -> bool:
            with slots.replayer(k, step(seen, "echo replayed > out"), (0,)) as replayer:
                return replayer.replay(Variation("plain"), 2).stable

        assert in_slots(range(4), range(slots.count), replay, slots) == [True] * 4
        assert any("in a slot's namespace" in what for what in left_behind(tree, seen))  # the guards, still open
    lines = [f.read_text().split() for f in seen.glob("ns-*")]
    assert len(lines) == 8  # 4 steps x 2 replays
    spaces = namespaces(seen)
    assert len(spaces) == 4 and os.readlink("/proc/self/ns/mnt") not in spaces  # one namespace a slot
    assert {(uid, cwd) for _, uid, cwd, *_ in lines} == {(str(os.getuid()), str(tree / "sub"))}  # ids mapped back
    assert (tree / "sub" / "out").read_text() == "traced\n"  # the tree itself never saw a replay
    assert left_behind(tree, seen) == []


@pytest.mark.parametrize("how", ["error", "ctrl-c"])
def test_slots_ended_mid_replay_leave_nothing_and_stop_the_running_replays(campaign, tmp_path, how):
    tree, seen = campaign
    long = step(seen, f"sleep 60; touch {seen}/finished")

    def started() -> None:  # the long replay is running: its step has said where
        deadline = time.monotonic() + 60
        while not namespaces(seen) and time.monotonic() < deadline:
            time.sleep(0.02)

    def ctrl_c() -> None:
        started()
        os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(RuntimeError if how == "error" else KeyboardInterrupt):
        with ReplaySlots(tree, 2, tmp_path / "logs") as slots:
            def replay(item: str, k: int) -> bool:
                if item == "boom":
                    started()
                    raise RuntimeError("mid-replay")
                with slots.replayer(k, long, (0,)) as replayer:
                    return replayer.replay(Variation("plain"), 1).stable

            if how == "ctrl-c":
                threading.Thread(target=ctrl_c, daemon=True).start()
            in_slots(["long", "boom", "long", "long"] if how == "error" else ["long"] * 4, range(slots.count),
                     replay, slots)
    spaces = namespaces(seen)
    assert spaces and os.readlink("/proc/self/ns/mnt") not in spaces
    assert not (seen / "finished").exists()  # ended, not waited for
    assert left_behind(tree, seen) == []
    assert (tree / "sub" / "out").read_text() == "traced\n"
