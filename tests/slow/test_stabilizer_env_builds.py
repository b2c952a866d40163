"""A stabiliser test changes only what it fixes, end to end: a step that records the time
and its environment is stabilised by a fixed clock. By hand (3 runs a second apart each):
plain 3 outputs, under the faketime program 3 (it puts its own pid in the environment),
libfaketime preloaded with one clock state for all 1. When every replay under a fixed clock
got another environment, the search said "no known stabiliser"."""

from __future__ import annotations

import json

import pytest

from conftest import buildfuzz, make_project

RECORDS_TIME_AND_ENVIRONMENT = """
    all: buildinfo.txt
    buildinfo.txt:
        (date +%s; env | sort) > $@
    """


@pytest.mark.needs("faketime")
def test_a_step_recording_the_time_and_its_environment_is_stabilised_by_the_clock(tmp_path):
    src = make_project(tmp_path / "src", RECORDS_TIME_AND_ENVIRONMENT)
    out = tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", tmp_path / "s", "--runs", "3", "--seed", "1",
                  "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    (culprit,) = json.loads(out.read_text())["culprits"]
    assert (culprit["kind"], culprit["stabilized_by"]) == ("intrinsic", ["clock"]), culprit
