"""The report's scope: every axis, tried how often, or why not."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from fuzzer import axes
from fuzzer.report import scope as scope_module
from fuzzer.model import NotTried
from fuzzer.plan import Perturbation
from fuzzer.report.scope import scope, scope_line


def test_each_axis_counts_the_runs_that_left_the_reference_along_it():
    reference = Perturbation(1, (0, 1))
    runs = [reference, Perturbation(8, (0,), 0.5, 3), Perturbation(8, (0, 1)).with_variation("tz", "UTC")]
    by_axis = {s.axis: s for s in scope(("jobs", "cpus", "jitter", "tz"), runs)}
    assert [s.axis for s in scope(("jobs",), runs)] == [a.name for a in axes.AXES]
    assert (by_axis["jobs"].runs, by_axis["jobs"].values) == (2, 2)
    assert (by_axis["cpus"].runs, by_axis["jitter"].runs, by_axis["tz"].runs) == (1, 1, 1)
    assert by_axis["locale"].not_tried == NotTried.NOT_ASKED and by_axis["jobs"].not_tried == NotTried.TRIED


def test_an_axis_asked_but_never_drawn_says_why(monkeypatch):
    runs = [Perturbation(1, (0,)), Perturbation(2, (0,))]
    missing = lambda: "faketime is not installed"
    monkeypatch.setattr(scope_module, "AXES", tuple(replace(a, requires=missing) if a.name == "clock" else a
                                                   for a in axes.AXES))
    by_axis = {s.axis: s for s in scope(("jobs", "umask", "clock", "hold"), runs)}
    assert by_axis["umask"].not_tried == NotTried.RUNS_ENDED
    assert (by_axis["clock"].not_tried, by_axis["clock"].problem) == (NotTried.UNAVAILABLE, "faketime is not installed")
    assert by_axis["hold"].not_tried == NotTried.NO_TARGET


@pytest.mark.parametrize("named", [["all"], ["jobs", "all"]])
def test_vary_all_stands_for_every_environment_axis(named):
    environment = [a.name for a in axes.AXES if a.group == axes.ENVIRONMENT]
    assert axes.with_all(named) == named[:-1] + environment


def test_the_scope_line_names_every_axis_once():
    runs = [Perturbation(1, (0,)), Perturbation(2, (0,))]
    line = scope_line(scope(("jobs", "shuffle", "hold"), runs))
    named = re.findall(r"[a-z]+", line)
    assert all(named.count(a.name) == 1 for a in axes.AXES if a.name != "hold")  # hold: "held back" only
    assert line.startswith("varied jobs (1 run)")


def test_an_axis_that_did_not_reach_the_whole_build_says_why_and_earns_no_bound():
    runs = [Perturbation(1, (0,)), Perturbation(1, (0,)).with_variation("shuffle", "7")]
    why = "the traced build ran GNU make 4.3, which drops --shuffle"
    by_axis = {s.axis: s for s in scope(("jobs", "shuffle"), runs, {"shuffle": why})}
    assert (by_axis["shuffle"].runs, by_axis["shuffle"].not_tried, by_axis["shuffle"].problem) == \
        (1, NotTried.TRIED, why)
    assert by_axis["jobs"].problem == ""
    assert why in scope_line(list(by_axis.values()))


def test_an_axis_no_program_of_the_build_reads_says_which_did_not_run():
    runs = [Perturbation(1, (0,)), Perturbation(2, (0,))]
    by_axis = {s.axis: s for s in scope(("jobs", "shuffle"), runs, unread=("shuffle",))}
    assert (by_axis["shuffle"].runs, by_axis["shuffle"].not_tried) == (0, NotTried.NO_READER)
    assert "make" in by_axis["shuffle"].problem
    assert by_axis["jobs"].not_tried == NotTried.TRIED
    line = scope_line(list(by_axis.values()))
    assert line.count("shuffle") == 1
