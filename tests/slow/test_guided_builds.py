"""Hazard-guided runs on a real make build: what a held run's failure confirms."""

from __future__ import annotations

import json

import pytest

from conftest import buildfuzz, make_project

# A phony `dirs` step makes build/object/, which the compiles write into without depending
# on it; their recipes wait 0.2 s first, so without a hold they always find it. The link
# writes build/app into build/, which `dirs` makes too, but it needs every object first.
PHONY_DIRS = """
    .PHONY: all dirs
    all: dirs build/app
    dirs:
        mkdir -p build/object
    build/app: build/object/app.o build/object/util.o
        cat build/object/app.o build/object/util.o > build/app
    build/object/%.o: %.c
        sleep 0.2; cp $< build/object/$*.o
    """


@pytest.mark.needs("hold", "strace")
def test_a_held_run_failing_in_another_step_confirms_nothing_of_the_held_steps_other_conflicts(tmp_path):
    """Holding `dirs` back makes a compile fail ("cannot create build/object/app.o"): that
    is the compiles' race with `dirs`, confirmed; the link's conflict with `dirs` on build/,
    a target of the same held run, is no party to that failure and stays unconfirmed."""
    source = make_project(tmp_path / "src", PHONY_DIRS, {"app.c": "int main(void) { return 0; }\n",
                                                         "util.c": "int util(void) { return 1; }\n"})
    report = tmp_path / "report.json"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", "6", "--seed", "1",
                       "--no-jitter", "--jobs", "4-4", "--report-json", report, "--", "make", "-j{jobs}", timeout=300)
    data = json.loads(report.read_text())
    held = [r for r in data["runs"] if r["reason"] == "target"]
    assert any(r["status"] == "failed" for r in held), result.stdout + result.stderr  # the hold did make it fail
    confirmed = [h for h in data["hazards"] if h["status"] == "confirmed"]
    assert [h["file"] for h in confirmed] == ["build/object/"]
    assert confirmed[0]["writer"] == "mkdir -p build/object"


# Two recipes take and drop one lock file; `b` runs only after the 0.3 s `wait`, by when
# `a` is done, so without a hold they never overlap and `a` always goes first. Every
# build differs anyway (a.out holds the time), so a held run's output can confirm nothing.
NEAR_MISS_LOCK = """
    .PHONY: all a b wait
    all: a b
    a:
        touch .lock; sleep 0.05; rm -f .lock; date +%s%N > a.out
    wait:
        sleep 0.3
    b: wait
        touch .lock; rm -f .lock
    """


@pytest.mark.needs("hold", "strace")
def test_a_held_runs_trace_shows_a_lock_file_hazard_no_output_can(tmp_path):
    """The held run reverses the two lock takers: its trace, with the reference's, shows them
    in opposite orders, the evidence that they are unordered."""
    source = make_project(tmp_path / "src", NEAR_MISS_LOCK, {})
    report = tmp_path / "report.json"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", "6", "--seed", "1",
                       "--no-jitter", "--jobs", "4-4", "--report-json", report, "--", "make", "-j{jobs}", timeout=300)
    data = json.loads(report.read_text())
    held = {r["index"] for r in data["runs"] if r["reason"] == "target"}
    (hazard,) = [h for h in data["hazards"] if h["file"] == ".lock"]
    assert hazard["type"] == "write-write", result.stdout
    assert held & set(hazard["runs"]), hazard["runs"]
