"""The axis table: schedule, launch, ablation and replay flags all come from one entry per axis."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer import axes
from fuzzer.compare import compare
from fuzzer.execute.local import BuildSpec, LocalExecutor
from fuzzer.execute.run import RunRequest
from fuzzer.execute.workspace import Workspace
from fuzzer.plan import Perturbation, Space, phases, schedule

SPACE = Space(jobs=(1, 8), cpus=(0, 1))
ENVIRONMENT = tuple(axes.BY_NAME[n] for n in ("tz", "umask", "hashseed"))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31))
def test_without_varied_axes_the_schedule_is_plans(seed):
    assert list(itertools.islice(axes.schedule(SPACE, seed, ()), 30)) == list(itertools.islice(schedule(SPACE, seed), 30))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31))
def test_varied_axes_leave_the_schedule_axes_as_they_were(seed):
    plain = list(itertools.islice(schedule(SPACE, seed), 40))
    varied = list(itertools.islice(axes.schedule(SPACE, seed, ENVIRONMENT), 40 + len(ENVIRONMENT)))
    head = 1 + len(phases(SPACE, seed)[1])  # the reference and the schedule's extremes
    assert varied[:head] == plain[:head] and not any(p.variations for p in varied[:head])
    inserted = varied[head: head + len(ENVIRONMENT)]
    assert [name for p in inserted for name, _ in p.variations] == [a.name for a in ENVIRONMENT]
    core = [(p.jobs, p.cpus, p.jitter, p.seed) for p in varied[head + len(ENVIRONMENT):]]
    assert core == [(p.jobs, p.cpus, p.jitter, p.seed) for p in plain[head:]]
    assert any(p.variations for p in varied[head + len(ENVIRONMENT):])


def test_launch_applies_each_axis():
    p = Perturbation(4, (0,)).with_variation("tz", "Etc/GMT-14").with_variation("umask", "0077")
    p = p.with_variation("hashseed", "7").with_variation("shuffle", "reverse")
    launch = axes.launch("make -j{jobs} all", p, {"MAKEFLAGS": "-k", "PATH": os.environ["PATH"]})
    assert launch.cpus == (0,)
    assert launch.env["TZ"] == "Etc/GMT-14" and launch.env["PYTHONHASHSEED"] == "7"
    assert launch.env["MAKEFLAGS"] == "-j4 -k --shuffle=reverse"
    assert launch.argv[:3] == ("/bin/sh", "-c", 'umask 0077 && exec "$@"') and launch.argv[-3:] == ("make", "-j4", "all")


def test_a_reference_value_is_no_variation():
    p = Perturbation(2, (0, 1)).with_variation("tz", "UTC")
    assert p.with_variation("tz", axes.REFERENCE).variations == ()
    assert Perturbation.from_json(p.to_json()) == p
    assert "tz=UTC" in p.describe()


def test_ablation_resets_every_axis_to_the_reference():
    reference = Perturbation(1, (0, 1))
    p = Perturbation(8, (1,), 0.5, 9).with_variation("tz", "UTC").with_variation("dirorder", "reverse")
    for name in axes.ABLATION_ORDER:
        p = axes.BY_NAME[name].reset(p, reference)
    assert p == reference


@pytest.mark.parametrize("text", ["tz", "jobs=3", "nosuch=1", "tz=a b", "tz=" + "x" * 100, "=UTC"])
def test_replay_vary_refuses_what_is_not_an_order_or_environment_value(text):
    with pytest.raises(ValueError):
        axes.parse_variation(text)


def test_an_environment_axis_that_separates_variants_is_named(tmp_path):
    def run(index, tz):
        p = Perturbation(1 + index % 3, (0, 1)).with_variation("tz", tz)
        return _fake_record(index, p, {"stamp": "utc" if tz in ("", "UTC") else "far-east"})

    runs = [run(0, ""), run(1, "Etc/GMT-14"), run(2, "UTC"), run(3, "Etc/GMT-14"), run(4, "")]
    (artifact,) = compare(runs).divergent
    assert [f.axis for f in artifact.factors] == ["tz"]


def _fake_record(index, p, files):
    from fuzzer.execute.fake import FakeExecutor

    return FakeExecutor(lambda _: files).run(RunRequest(index, p))


# --- real builds ----------------------------------------------------------------------------

LISTING = "all:\n\tls -f src > order.txt\n"


@pytest.mark.slow
@pytest.mark.skipif(axes.BY_NAME["dirorder"].requires() is not None, reason="disorderfs/FUSE not usable here")
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


@pytest.mark.slow
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


@pytest.mark.skipif(axes.BY_NAME["hostname"].requires() is not None, reason="no UTS namespace here")
def test_the_hostname_axis_gives_the_build_its_own_host_name():
    p = Perturbation(1, (0,)).with_variation("hostname", "buildfuzz-host")
    launch = axes.launch("hostname", p, dict(os.environ))
    assert subprocess.run(list(launch.argv), capture_output=True, text=True, env=launch.env).stdout.strip() == "buildfuzz-host"


@pytest.mark.skipif(axes.BY_NAME["buildpath"].requires() is not None, reason="no mount namespaces here")
def test_the_build_path_axis_builds_the_same_tree_at_another_path(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "Makefile").write_text("all:\n\tpwd > where.txt\n")
    spec = BuildSpec("make", Workspace(source, tmp_path / "ws" / "src"), tmp_path / "logs")
    with LocalExecutor(spec) as executor:
        here = executor.run(RunRequest(0, Perturbation(1, (0,))))
        assert (tmp_path / "ws" / "src" / "where.txt").read_text().strip() == str(tmp_path / "ws" / "src")
        there = executor.run(RunRequest(1, Perturbation(1, (0,)).with_variation("buildpath", "elsewhere")))
        assert (tmp_path / "ws" / "src" / "where.txt").read_text().strip() == str(tmp_path / "ws" / "src.at-elsewhere")
    assert here.ok and there.ok
    assert here.manifest.entries["where.txt"].digest != there.manifest.entries["where.txt"].digest
    assert str(tmp_path) not in open("/proc/self/mountinfo").read()


def test_a_trace_of_the_tree_at_another_build_path_reads_as_the_workspace():
    from fuzzer.trace.processes import ProcessTracker

    tracker = ProcessTracker("/store/workspace/src")
    assert tracker._classify("/store/workspace/src.at-elsewhere/lib/a.c") == "lib/a.c"
    assert tracker._classify("/store/workspace/src.at-elsewhere") == "."
    assert tracker._classify("/store/workspace/srcother/a.c") == "/store/workspace/srcother/a.c"
