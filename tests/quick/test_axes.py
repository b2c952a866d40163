"""The axis table: schedule, launch, ablation and replay flags all come from one entry per axis."""

from __future__ import annotations

import itertools
import json
import os
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import buildfuzz_in_process
from fuzzer import axes, structs
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


def test_the_user_axis_wraps_the_build_inside_the_axes_that_enter_a_namespace(tmp_path):
    """A process already running as another uid may not make a namespace: the user axis goes
    innermost, whatever order the values were given in."""
    p = Perturbation(2, (0,)).with_variation("user", "4242").with_variation("buildpath", "p")
    p = p.with_variation("execpath", "/x").with_variation("frozenclock", "2001-02-03")
    launch = axes.launch("make", p, {"PATH": "/usr/bin"}, tmp_path / "tree")
    at = launch.argv.index("--map-user=4242")
    assert launch.argv[at - 1].endswith("unshare") and launch.argv[at + 3:] == ("make",)
    assert "-m" in launch.argv[:at] or "-Urm" in launch.argv[:at]  # the build path's namespace, outside it
    assert launch.argv[1:3] == ("-f", "2001-02-03 00:00:00")  # faketime, outermost
    assert launch.env["PATH"] == "/usr/bin:/x"


@given(st.integers(1, 65533), st.dates())
def test_every_drawn_or_valid_value_of_the_new_axes_is_accepted(uid, day):
    assert axes.parse_variation(f"user={uid}") == ("user", str(uid))
    if day.year >= 1970:
        assert axes.parse_variation(f"frozenclock={day.isoformat()}") == ("frozenclock", day.isoformat())
    else:  # before the epoch: no time_t to freeze at
        with pytest.raises(ValueError):
            axes.parse_variation(f"frozenclock={day.isoformat()}")


def test_a_reference_value_is_no_variation():
    p = Perturbation(2, (0, 1)).with_variation("tz", "UTC")
    assert p.with_variation("tz", axes.REFERENCE).variations == ()
    assert structs.decode(structs.encode(p), Perturbation) == p
    assert "tz=UTC" in p.describe()


def test_ablation_resets_every_axis_to_the_reference():
    reference = Perturbation(1, (0, 1))
    p = Perturbation(8, (1,), 0.5, 9).with_variation("tz", "UTC").with_variation("dirorder", "reverse")
    for name in axes.ABLATION_ORDER:
        p = axes.BY_NAME[name].reset(p, reference)
    assert p == reference


@pytest.mark.parametrize("text", ["tz", "jobs=3", "nosuch=1", "tz=a b", "tz=" + "x" * 100, "=UTC", "user=0", "user=65534",
                                  "user=007", "user=me", "frozenclock=2000-02-30", "frozenclock=1969-12-31",
                                  "frozenclock=+397d"])
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


@pytest.mark.needs("hostname")
def test_the_hostname_axis_gives_the_build_its_own_host_name():
    p = Perturbation(1, (0,)).with_variation("hostname", "buildfuzz-host")
    launch = axes.launch("hostname", p, dict(os.environ))
    assert subprocess.run(list(launch.argv), capture_output=True, text=True, env=launch.env).stdout.strip() == "buildfuzz-host"


@pytest.mark.needs("unshare")  # the build path axis bind-mounts the tree
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
    from fuzzer.trace.paths import PathNames

    paths = PathNames("/store/workspace/src")
    assert paths.relative("/store/workspace/src.at-elsewhere/lib/a.c") == "lib/a.c"
    assert paths.relative("/store/workspace/src.at-elsewhere") == "."
    assert paths.relative("/store/workspace/srcother/a.c") == "/store/workspace/srcother/a.c"


def test_a_step_at_another_build_path_is_the_same_step():
    """Its argv and environment name the tree at the workspace's path, so the traces of
    both builds pair the step up and a replay runs where the workspace is."""
    from fuzzer.trace.paths import PathNames

    paths = PathNames("/store/workspace/src")
    assert paths.unmoved("/store/workspace/src.at-elsewhere/where.c") == "/store/workspace/src/where.c"
    assert paths.unmoved("-I/store/workspace/src.at-p/include") == "-I/store/workspace/src/include"
    assert paths.unmoved("PWD=/store/workspace/src.at-p") == "PWD=/store/workspace/src"
    assert paths.unmoved("/store/workspace/srcother.at-p/a.c") == "/store/workspace/srcother.at-p/a.c"


# --- same conditions: every axis ------------------------------------------------------------


def _same_conditions(runs):
    (artifact,) = compare(runs).divergent
    return artifact.same_conditions


def test_runs_that_differ_only_in_build_path_are_not_identical_conditions():
    """Seen: "differs between runs with identical perturbation" for two runs whose only
    difference was the build path, which is what made the output differ."""
    here, there = Perturbation(8, (0, 1)), Perturbation(8, (0, 1)).with_variation("buildpath", "elsewhere")
    runs = [_fake_record(0, Perturbation(1, (0, 1)), {"lib.so": "a"}), _fake_record(1, here, {"lib.so": "a"}),
            _fake_record(2, there, {"lib.so": "b"})]
    assert not _same_conditions(runs)
    again = _fake_record(3, there, {"lib.so": "c"})
    assert _same_conditions([*runs, again])  # the same variations twice, two outputs


# --- reasons, promises and make in a campaign ------------------------------------------------


def test_every_run_of_the_report_says_why_it_ran(tmp_path):
    from fuzzer.campaign import run_campaign
    from fuzzer.config import FuzzConfig
    from fuzzer.execute.fake import FakeExecutor
    from fuzzer.report import json_format
    from fuzzer.report.schema import report_schema
    import jsonschema

    source = tmp_path / "src"
    source.mkdir()
    config = FuzzConfig(source=source, command="make", store=tmp_path / "store", runs=12, seed=3, jobs=(1, 8),
                        localize=False, axes=("jobs", "cpus", "jitter", "tz", "umask"))
    outcome = run_campaign(config, executor_factory=lambda spec: FakeExecutor(lambda p: {"a": "same"}))
    data = json_format.to_builtins(outcome.report)
    jsonschema.validate(data, report_schema())
    reasons = [run["reason"] for run in data["runs"]]
    assert reasons[0] == "reference" and set(reasons) == {"reference", "extreme", "sample"}
    perturbations = [json.dumps(run["perturbation"], sort_keys=True) for run in data["runs"]]
    assert len(set(perturbations)) == len(perturbations) == 12
    varied = {name for run in data["runs"] for name in run["perturbation"].get("variations", {})}
    assert varied == {"tz", "umask"}


def test_too_few_runs_for_the_varied_axes_is_one_line_and_exit_2(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "Makefile").write_text("all:\n\ttouch built\n")
    done = buildfuzz_in_process("run", "--source", source, "--store", tmp_path / "store", "--runs", "2",
                                "--vary", "tz,umask", "--", "make", timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "buildfuzz: error: --runs 2 is too small for --vary tz,umask: the reference and one run per varied axis "
        "need --runs 3 or more"]
    assert not (tmp_path / "store" / "workspace" / "src" / "built").exists()  # refused before any build


def _fake_make(directory, version):
    directory.mkdir(parents=True, exist_ok=True)
    make = directory / "make"
    make.write_text(f"#!/bin/sh\necho 'GNU Make {version}'\n")
    make.chmod(0o755)
    return make


@pytest.fixture
def fresh_make(monkeypatch, tmp_path):
    """make's choice made again, with this test's PATH, packages and cache."""
    from fuzzer.tools import make

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", f"{_fake_make(tmp_path / 'system', '4.3').parent}:/usr/bin:/bin")
    monkeypatch.setattr(make, "PACKAGE", "buildfuzz-test-gnumake")  # a gnumake installed here stays out
    make.for_builds.cache_clear()
    yield make
    make.for_builds.cache_clear()


def _installed_gnumake(monkeypatch, site, make_file, digest_of=None):
    """A gnumake-like distribution (under the test's package name) as `pip install --target`
    lays it out (its RECORD's path points elsewhere); the RECORD's digest is `digest_of`'s
    content (default: the make's)."""
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256((digest_of or make_file).read_bytes()).digest()).rstrip(b"=")
    info = site / "buildfuzz_test_gnumake-4.4.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: buildfuzz-test-gnumake\nVersion: 4.4.1\n")
    (info / "RECORD").write_text(f"../../bin/make,sha256={digest.decode()},1\n")
    monkeypatch.syspath_prepend(str(site))


def test_an_older_make_on_path_gives_way_to_the_packaged_one_in_every_build(fresh_make, monkeypatch, tmp_path):
    packaged = _fake_make(tmp_path / "site" / "bin", "4.4.1")
    _installed_gnumake(monkeypatch, tmp_path / "site", packaged)
    found = fresh_make.for_builds()
    assert (found.path, found.version, found.packaged) == (str(packaged), (4, 4), True)
    assert fresh_make.shuffle_problem() is None
    env = axes.launch("make -j{jobs}", Perturbation(2, (0,)), {"PATH": "/usr/bin"}).env
    first, _, rest = env["PATH"].partition(":")
    assert os.listdir(first) == ["make"] and os.path.realpath(os.path.join(first, "make")) == str(packaged)
    assert rest == "/usr/bin"
    assert axes.which_make(axes.DEFAULT) == [f"make: the make on every build's PATH was {found.describe()}"]
    assert "4.4" in found.describe() and str(packaged) in found.describe()


def test_a_make_that_is_not_the_packaged_file_is_never_taken_for_it(fresh_make, monkeypatch, tmp_path):
    other = tmp_path / "another-file"
    other.write_text("not this make")
    _installed_gnumake(monkeypatch, tmp_path / "site", _fake_make(tmp_path / "site" / "bin", "4.4.1"), digest_of=other)
    found = fresh_make.for_builds()
    assert (found.version, found.packaged) == ((4, 3), False)
    assert "buildfuzz[shuffle]" in fresh_make.shuffle_problem()
    assert axes.launch("make", Perturbation(1, (0,)), {"PATH": "/usr/bin"}).env["PATH"] == "/usr/bin"


def test_a_make_on_path_with_shuffle_is_the_one_builds_run(fresh_make, monkeypatch, tmp_path):
    newer = _fake_make(tmp_path / "newer", "4.4")
    monkeypatch.setenv("PATH", f"{newer.parent}:/usr/bin:/bin")
    found = fresh_make.for_builds()
    assert (found.path, found.packaged) == (str(newer), False)
    assert axes.which_make(("jobs",)) == []  # not asked for shuffle, and PATH unchanged: nothing to say


def test_replay_refuses_a_variation_whose_tool_is_missing(fresh_make):
    with pytest.raises(axes.UsageError, match="cannot apply --vary shuffle=reverse here: GNU make 4.3 has no --shuffle"):
        axes.require_usable(Perturbation(1, (0,)).with_variation("shuffle", "reverse"))


# --- scenarios: the vary key ----------------------------------------------------------------


def test_a_scenario_varies_the_environment_axes_it_names(tmp_path):
    from fuzzer.scenarios import load_scenario

    (tmp_path / "scenario.toml").write_text('command = "make"\n[run]\nvary = ["buildpath", "tz"]\n'
                                            '[expect]\nverdict = "unreproducible"\n')
    assert load_scenario(tmp_path).vary == ("buildpath", "tz")


@pytest.mark.parametrize("value", ['["jobs"]', '"buildpath"', "[]", '["nosuch"]'])
def test_a_scenario_vary_key_takes_environment_axes_only(tmp_path, value):
    from fuzzer.scenarios import load_scenario

    (tmp_path / "scenario.toml").write_text(f'command = "make"\n[run]\nvary = {value}\n[expect]\nverdict = "reproducible"\n')
    with pytest.raises(axes.UsageError, match=r"run\.vary must be a list of axes among tz, locale"):
        load_scenario(tmp_path)


def _one_cpu_interrupts(p):
    if p.ncpus == 1:
        raise KeyboardInterrupt
    return {"a": "two"}


@pytest.mark.parametrize("stop_on_first, outcome, why", [
    (True, lambda p: {"a": "one" if p.ncpus == 1 else "two"}, "first divergence found"),  # the one-CPU extreme
    (False, _one_cpu_interrupts, "interrupted"),  # a Ctrl-C there
])
def test_a_campaign_stopped_before_a_varied_axis_ran_says_so(tmp_path, stop_on_first, outcome, why):
    from fuzzer.campaign import run_campaign
    from fuzzer.config import FuzzConfig
    from fuzzer.execute.fake import FakeExecutor

    source = tmp_path / "src"
    source.mkdir()
    config = FuzzConfig(source=source, command="make", store=tmp_path / "store", runs=8, seed=3, jobs=(1, 8),
                        localize=False, axes=("jobs", "cpus", "jitter", "umask"), stop_on_first=stop_on_first)
    report = run_campaign(config, executor_factory=lambda spec: FakeExecutor(outcome)).report
    assert not any("umask" in r.perturbation.get("variations", {}) for r in report.runs)
    assert f"--vary umask: no run varied the umask ({why}): the verdict says nothing about it" in report.notes
