"""Hazard-guided schedules: targets from one trace, the hold library, confirmed hazards."""

from __future__ import annotations

import shutil

import pytest

from conftest import SCENARIOS, buildfuzz


@pytest.mark.needs("hold")
def test_a_race_plain_rebuilds_never_hit_is_found_and_confirmed(tmp_path):
    source = tmp_path / "near-miss-header"
    shutil.copytree(SCENARIOS / "near-miss-header", source)
    report = tmp_path / "report.json"
    result = buildfuzz("run", "--source", source, "--store", tmp_path / "store", "--runs", "6", "--seed", "1",
                       "--no-jitter", "--report-json", report, "--", "make", "-j{jobs}", timeout=300)
    assert result.returncode == 1, result.stdout + result.stderr
    import json

    data = json.loads(report.read_text())
    (confirmed,) = [h for h in data["hazards"] if h["status"] == "confirmed"]
    assert confirmed["file"] == "config.h" and "--vary hold=" in confirmed["reproduce"]
    assert any("-c main.c" in c["command"] and c["kind"] == "race" for c in data["culprits"])
