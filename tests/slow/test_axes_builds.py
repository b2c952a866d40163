"""The axis table: schedule, launch, ablation and replay flags all come from one entry per axis."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.execute.run import RunRequest
from fuzzer.execute.workspace import Workspace
from fuzzer.plan import Perturbation


# --- real builds ----------------------------------------------------------------------------

LISTING = "all:\n\tls -f src > order.txt\n"


@pytest.mark.needs("disorderfs")
def test_directory_order_reaches_the_build_and_leaves_no_mount(tmp_path):
    source = tmp_path / "src"
    (source / "src").mkdir(parents=True)
    for name in "abcdef":
        (source / "src" / f"{name}.c").write_text(name)
    (source / "Makefile").write_text(LISTING)
    spec = BuildSpec("make", Workspace(source, tmp_path / "ws" / "src"), tmp_path / "logs")
    with LocalExecutor(spec) as executor:
        plain = executor.run(RunRequest(0, Perturbation(1, (0,))))
        order = (tmp_path / "ws" / "src" / "order.txt").read_text().split()
        reverse = executor.run(RunRequest(1, Perturbation(1, (0,)).with_variation("dirorder", "reverse")))
        reversed_order = (tmp_path / "ws" / "src" / "order.txt").read_text().split()
    assert plain.ok and reverse.ok
    names = [n for n in order if n.endswith(".c")]
    assert [n for n in reversed_order if n.endswith(".c")] == names[::-1]
    assert plain.manifest.entries["order.txt"].digest != reverse.manifest.entries["order.txt"].digest
    assert str(tmp_path) not in open("/proc/self/mountinfo").read()
    assert not (tmp_path / "ws" / "src.disorderfs").exists()


SEES = ("all: day.txt\n"  # what a build sees of its uid, gid, PATH and clock; day.txt is made after stamp
        "stamp:\n\tid -u > uid.txt; id -g >> uid.txt; tar cf uid.tar uid.txt; echo \"$$PATH\" > path.txt\n"
        "day.txt: stamp\n\tdate -u +%F > $@; sleep 1; date -u +%T >> $@\n")


def _sees(tmp_path, variations: dict[str, str], name: str):
    """One real build of SEES with `variations`, its tree at a path of its own."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "Makefile").write_text(SEES)
    spec = BuildSpec("make", Workspace(source, tmp_path / name / "src"), tmp_path / "logs")
    p = Perturbation(1, (0,))
    for axis, value in variations.items():
        p = p.with_variation(axis, value)
    with LocalExecutor(spec) as executor:
        result = executor.run(RunRequest(0, p))
    assert result.ok, (tmp_path / "logs").glob("*")
    return tmp_path / name / "src"


@pytest.mark.needs("unshare", "user namespace", "faketime")
def test_the_user_path_and_frozen_clock_axes_reach_every_process_of_the_build(tmp_path):
    tree = _sees(tmp_path, {"user": "4242", "execpath": "/nonexistent/x", "frozenclock": "2001-02-03",
                            "buildpath": "elsewhere"}, "ws")
    assert (tree / "uid.txt").read_text().split() == ["4242", "4242"]
    members = subprocess.run(["tar", "tvf", str(tree / "uid.tar")], capture_output=True, text=True).stdout
    assert members.split()[1] == "4242/4242"  # as a tar without --owner records it
    assert (tree / "uid.txt").stat().st_uid == os.getuid()  # on disk it is still ours
    assert (tree / "path.txt").read_text().strip().endswith(":/nonexistent/x")
    assert (tree / "day.txt").read_text().split() == ["2001-02-03", "00:00:00"]  # a second later, still
    assert str(tmp_path) not in open("/proc/self/mountinfo").read()


def test_replay_accepts_an_environment_axis(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "Makefile").write_text("all:\n\tdate +%Z > zone.txt\n")
    store = tmp_path / "store"
    run = [sys.executable, "-m", "fuzzer"]
    first = subprocess.run([*run, "run", "--source", source, "--store", store, "--runs", "3", "--seed", "1",
                            "--no-localize", "--", "make"], capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    replay = subprocess.run([*run, "replay", "--store", store, "--jobs", "1", "--vary", "tz=Etc/GMT-14"],
                            capture_output=True, text=True, timeout=120)
    assert replay.returncode == 1 and "zone.txt" in replay.stdout, replay.stdout + replay.stderr


SHUFFLE_ONLY = "all: first.out second.out\nfirst.out:\n\techo 1 > $@\nsecond.out:\n\tcat first.out > $@\n"


@pytest.mark.needs("make 4.4")  # --shuffle (buildfuzz[shuffle] brings it)
def test_a_shuffle_only_failure_is_a_finding_with_its_shuffle_replay(tmp_path):
    """`second.out` reads `first.out` without depending on it: at -j1 make's own order always
    works, make --shuffle=reverse (or a seed that swaps them) fails."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "Makefile").write_text(SHUFFLE_ONLY)
    store, report = tmp_path / "store", tmp_path / "report.json"
    run = [sys.executable, "-m", "fuzzer"]
    done = subprocess.run([*run, "run", "--source", source, "--store", store, "--runs", "4", "--seed", "1",
                           "--axes", "shuffle", "--report-json", report, "--", "make -j{jobs}"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(report.read_text())
    failed = [r for r in data["runs"] if r["status"] == "failed"]
    assert failed and all("shuffle" in r["perturbation"]["variations"] for r in failed)
    assert all(r["perturbation"]["jobs"] == 1 for r in data["runs"])
    assert any(n.startswith("make: the make on every build's PATH was GNU make 4.") for n in data["notes"])
    replay = shlex.split(data["minimal_reproducer"])
    assert any(word.startswith("shuffle=") for word in replay)
    again = subprocess.run([*run, *replay[1:]], capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "first.out" in again.stdout, again.stdout + again.stderr
