"""A step replayed in a parallel slot writes the slot's own copy of the tree's parent: a
step writing `../pkg.txt` (dpkg-buildpackage's `.deb`s beside the tree) is judged on what
its replays wrote, never on a copy they did not touch (bug B2 of 2026-12-02)."""

from __future__ import annotations

import json

from conftest import buildfuzz, make_project

PARENT = """
    all:
            python3 gen.py > ../pkg.txt
    .PHONY: all
"""
GEN = "print(sorted({'alpha', 'beta', 'gamma', 'delta', 'epsilon'}, key=hash))\n"


def test_a_step_writing_beside_the_tree_is_replayed_in_its_slot(tmp_path):
    src = make_project(tmp_path / "src", PARENT, {"gen.py": GEN})
    store, out = tmp_path / "s", tmp_path / "r.json"
    # --parallel 2: localization's replays run in slots, each its own mount namespace
    r = buildfuzz("run", "--source", src, "--store", store, "--runs", "4", "--parallel", "2",
                  "--report-json", out, "--", "make")
    assert r.returncode == 1, r.stderr
    report = json.loads(out.read_text())
    culprit = next(c for c in report["culprits"] if "gen.py" in c["command"])
    # its replays gave as many orders as the builds did: the hash seed's, found by replaying
    assert culprit["kind"] == "intrinsic" and culprit["stabilized_by"] == ["PYTHONHASHSEED"], culprit
    assert not list((store / "workspace").glob("*.replays")), "the slots are removed"
