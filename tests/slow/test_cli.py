"""The command line contract: exit codes, one-line errors, the JSON report's keys."""

import json
import subprocess

import pytest

from conftest import buildfuzz



def assert_usage_error(result, words):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert words in last and last.startswith("buildfuzz: error:")


def test_missing_source(tmp_path):
    r = buildfuzz("run", "--source", tmp_path / "nope", "--store", tmp_path / "s", "--", "make")
    assert_usage_error(r, "does not exist")
    assert not (tmp_path / "s").exists()


def test_empty_command(tmp_path, clean_project):
    assert_usage_error(buildfuzz("run", "--source", clean_project, "--store", tmp_path / "s", "--", " "), "no build command")


@pytest.mark.parametrize("jobs", ["0-4", "8-2", "many"])
def test_bad_jobs_range(tmp_path, clean_project, jobs):
    r = buildfuzz("run", "--source", clean_project, "--store", tmp_path / "s", "--jobs", jobs, "--", "make")
    assert_usage_error(r, "--jobs")


def test_unknown_axis(tmp_path, clean_project):
    r = buildfuzz("run", "--source", clean_project, "--store", tmp_path / "s", "--axes", "jobs,moon", "--", "make")
    assert_usage_error(r, "unknown axis 'moon'")


def test_unwritable_store(tmp_path, clean_project):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    r = buildfuzz("run", "--source", clean_project, "--store", blocker / "store", "--", "make")
    assert_usage_error(r, "cannot use store")


def test_artifact_glob_matching_nothing(tmp_path, clean_project):
    store = tmp_path / "s"
    r = buildfuzz("run", "--source", clean_project, "--store", store, "--runs", "2", "--artifact", "*.so", "--", "make")
    assert_usage_error(r, "--artifact '*.so' matched no file")
    assert not any((store / "workspace").glob("*")), "workspace left behind"


def test_command_not_found_is_a_failed_reference(tmp_path, clean_project):
    r = buildfuzz("run", "--source", clean_project, "--store", tmp_path / "s", "--runs", "3", "--",
                  "no-such-build-tool-xyz")
    assert r.returncode == 3
    assert "reference build failed" in r.stderr and "not found" in r.stderr
    assert "Traceback" not in r.stderr


def test_reproducible_build_exit_0_and_json_contract(tmp_path, clean_project):
    report = tmp_path / "r.json"
    r = buildfuzz("run", "--source", clean_project, "--store", tmp_path / "s", "--runs", "4", "--seed", "3",
                  "--report-json", report, "--", "make -j{jobs}")
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads(report.read_text())
    for key in ("schema", "command", "verdict", "runs", "failed_runs", "divergent_artifacts", "culprits",
                "hazards", "reproduce"):
        assert key in data
    assert data["verdict"] == "reproducible" and data["command"] == "make -j{jobs}"
    run = data["runs"][1]
    assert set(run) >= {"index", "perturbation", "exit_code", "wall_s", "digest"}
    assert set(run["perturbation"]) >= {"jobs", "cpus", "jitter", "seed"}
    assert data["runs"][0]["perturbation"]["jobs"] == 1 and data["runs"][0]["perturbation"]["jitter"] == 0


@pytest.mark.needs("2 cpus")
def test_unreproducible_exit_1_names_the_axis(tmp_path, nproc_project):
    report = tmp_path / "r.json"
    # 6 runs: two or more on each side of the CPU count, so the axis can be claimed
    r = buildfuzz("run", "--source", nproc_project, "--store", tmp_path / "s", "--runs", "6", "--seed", "1",
                  "--no-localize", "--report-json", report, "--", "make")
    assert r.returncode == 1, r.stdout + r.stderr
    data = json.loads(report.read_text())
    (artifact,) = data["divergent_artifacts"]
    assert artifact["path"] == "out.txt" and artifact["variants"] == 2
    assert "cpus" in artifact["axes"]
    assert "-cpus=2" in artifact["diff"] or "cpus=" in artifact["diff"]
    assert "buildfuzz replay" in data["reproduce"]


def test_replay_reproduces_a_recorded_run(tmp_path, nproc_project):
    store = tmp_path / "s"
    buildfuzz("run", "--source", nproc_project, "--store", store, "--runs", "3", "--seed", "1", "--no-localize", "--",
              "make")
    r = buildfuzz("replay", "--store", store, "--run", "2")  # the one-CPU run: its divergence reproduces
    assert r.returncode == 1, r.stdout + r.stderr
    assert "same digests as run 2" in r.stdout and "1 file differs from the reference" in r.stdout
    r = buildfuzz("replay", "--store", store, "--run", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "matched the reference" in r.stdout
    assert_usage_error(buildfuzz("replay", "--store", store, "--run", "99"), "not 99")


def test_in_place_build_runs_the_clean_command(tmp_path, clean_project):
    store = tmp_path / "store"
    r = buildfuzz("run", "--source", clean_project, "--store", store, "--runs", "3", "--in-place",
                  "--clean", "rm -f a.txt b.txt c.txt", "--report-json", tmp_path / "r.json", "--", "make")
    assert r.returncode == 0, r.stderr
    assert len(json.loads((tmp_path / "r.json").read_text())["runs"]) == 3
    assert_usage_error(buildfuzz("run", "--source", clean_project, "--store", store, "--in-place", "--", "make"),
                       "--in-place needs --clean")


def test_all_formats_and_step_summary_are_written(tmp_path, clean_project):
    summary = tmp_path / "summary.md"
    out = {name: tmp_path / name for name in ("r.json", "r.xml", "r.md", "r.html")}
    r = buildfuzz("run", "--source", clean_project, "--store", tmp_path / "s", "--runs", "2",
                  "--report-json", out["r.json"], "--junit", out["r.xml"], "--markdown", out["r.md"],
                  "--html", out["r.html"], "--", "make", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 0, r.stderr
    assert all(path.stat().st_size > 0 for path in out.values())
    assert summary.read_text() == out["r.md"].read_text()


@pytest.mark.needs("2 cpus")
def test_default_store_with_localization_leaves_the_tree_as_it_was(tmp_path, nproc_project):
    """The README's way: no --store, run in the source tree (a git work tree, as a package's
    is). The store goes to the cache, so `git status` (and `dpkg-source -b .`) see nothing new."""
    git = lambda *args: subprocess.run(["git", *args], cwd=nproc_project, check=True, capture_output=True, text=True)
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tree")
    before = sorted(nproc_project.rglob("*"))
    r = buildfuzz("run", "--runs", "3", "--seed", "1", "--report-json", tmp_path / "r.json", "--", "make",
                  cwd=nproc_project, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    culprit = json.loads((tmp_path / "r.json").read_text())["culprits"][0]
    assert (culprit["kind"], culprit["axis"]) == ("parallelism-level", "cpus")
    [store] = (tmp_path / "cache" / "buildfuzz" / "stores").iterdir()
    assert (store / "buildfuzz.sqlite").is_file() and str(store) in r.stderr  # said at the start
    assert sorted(nproc_project.rglob("*")) == before
    assert git("status", "--porcelain", "--ignored").stdout == ""
