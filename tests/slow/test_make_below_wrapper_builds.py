"""make below a wrapper (issue 30, fossil: `sh -c './configure && make'`): whether a make ran
decides the shuffle axis, and each make the trace saw has its database read."""

from __future__ import annotations

import json

import pytest

from conftest import buildfuzz


@pytest.mark.needs("strace", "hold")
def test_a_build_that_runs_no_make_draws_no_shuffle_and_the_scope_says_why(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "in.txt").write_text("x\n")
    report = tmp_path / "report.json"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", "6", "--seed", "3",
                       "--no-jitter", "--jobs", "1-4", "--report-json", report, "--",
                       "sh", "-c", "cp in.txt out.txt", timeout=300)
    data = json.loads(report.read_text())
    assert data["runs"][1]["reason"] != "reference", result.stderr
    assert [r["index"] for r in data["runs"] if "shuffle" in r["perturbation"].get("variations", {})] == []
    shuffle = next(s for s in data["scope"] if s["axis"] == "shuffle")
    assert (shuffle["runs"], shuffle["not_tried"]) == (0, "no-reader")
    assert "make" in shuffle["problem"]
