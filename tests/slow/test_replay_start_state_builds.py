"""A step replay starts from the state the traced step started from, as far as its own
outputs go: a step that skips its work when its output exists does the work again, and a
replay that still did none is no check (bugs A of 2026-12-02)."""

from __future__ import annotations

import json

from conftest import buildfuzz, make_project

SKIPS = """
    all: first second
    first:
        [ -e out.txt ] || od -An -tx8 -N8 /dev/urandom > out.txt
    second:
        [ -d gen ] || { mkdir gen && od -An -tx8 -N8 /dev/urandom > gen/out.txt; }
    .PHONY: all first second
"""


def test_a_step_that_skips_when_its_output_exists_is_replayed_from_before_it(tmp_path):
    src = make_project(tmp_path / "src", SKIPS)
    store, out = tmp_path / "s", tmp_path / "r.json"
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "2", "--check-steps", "all", "--no-localize",
                  "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    rows = {s["command"]: s for s in json.loads(out.read_text())["audit"]["steps"]}
    first = rows["[ -e out.txt ] || od -An -tx8 -N8 /dev/urandom > out.txt"]
    # the shell found out.txt absent in the trace: each replay starts without it and draws anew
    assert first["result"] == "varies", first
    # gen/ stays (a directory is not a file the replay restores): every replay skips, which checks nothing
    second = rows["[ -d gen ] || { mkdir gen && od -An -tx8 -N8 /dev/urandom > gen/out.txt; }"]
    assert second["result"] != "stable" and "replay wrote none of its outputs" in second["detail"], second
    assert (src / "Makefile").exists() and not (src / "out.txt").exists()
