"""The answer first on a real make build: three culprits of one pattern rule are one cause,
named with the rule's line from make's database, before any list, and the verdict with its
exit code closes the report."""

from __future__ import annotations

import json

import pytest

from conftest import buildfuzz, make_project

# line 4 is the pattern rule: every .out is written by its recipe, with bytes of its own each time
RANDOM_RULE = """\
all: a.out b.out c.out

# each output draws fresh random bytes: intrinsic, and no stabiliser makes it stable
%.out: %.in
    od -An -N8 -tx1 /dev/urandom | cat $< - > $@
"""


@pytest.mark.needs("strace")
def test_culprits_of_one_pattern_rule_are_one_cause_at_its_line(tmp_path):
    source = make_project(tmp_path / "src", RANDOM_RULE, {f"{s}.in": f"{s}\n" for s in "abc"})
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", 3, "--seed", 1,
                       "--axes", "jobs", "--stabilizers", "PYTHONHASHSEED", "--report-json", tmp_path / "r.json",
                       "--", "make", "-j{jobs}", timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["basis"] == "plain" and report["first_in_store"] is True
    assert sorted(c["outputs"][0] for c in report["culprits"]) == ["a.out", "b.out", "c.out"]
    assert {c["rule"] for c in report["culprits"]} == {"Makefile:4"}  # make's database, not a guess
    lines = result.stdout.splitlines()
    assert lines[0].startswith("verdict: UNREPRODUCIBLE")
    blocks = [i for i, line in enumerate(lines) if line.startswith("cause ")]
    assert len(blocks) == 1 and "Makefile:4" in lines[blocks[0]]
    assert blocks[0] < next(i for i, line in enumerate(lines) if "artifacts" in line)
    assert "UNREPRODUCIBLE" in lines[-1] and lines[-1].endswith("exit 1")
