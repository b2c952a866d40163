"""Temporary names are noise everywhere: in step identity, finding ids, failure comparison
and the known-noise judgement of logs. No builds: names, synthetic traces, report objects."""

from __future__ import annotations

import json

import pytest

from conftest import SCENARIOS, buildfuzz


# --- a real CMake configure ----------------------------------------------------------


@pytest.mark.needs("cmake", "ninja")
def test_a_cmake_configure_whose_logs_differ_only_in_temporary_names_is_one_line_of_noise(tmp_path):
    report_path = tmp_path / "report.json"
    result = buildfuzz("run", "--source", SCENARIOS / "cmake-try-compile", "--store", tmp_path / "store", "--runs", 4,
                       "--seed", 1, "--no-default-ignore", "--ignore", "build/.ninja_log", "--ignore",
                       "build/.ninja_deps", "--report-json", report_path, "--",
                       "cmake -S . -B build -G Ninja >/dev/null && cmake --build build -j {jobs}", timeout=600)
    assert result.returncode == 1, result.stderr
    report = json.loads(report_path.read_text())
    assert {a["path"] for a in report["divergent_artifacts"]} == {"build/CMakeFiles/CMakeError.log",
                                                                  "build/CMakeFiles/CMakeOutput.log"}
    (culprit,) = report["culprits"]
    assert culprit["command"] == "cmake -S . -B build -G Ninja" and culprit["kind"] == "intrinsic"
    assert culprit["evidence"].startswith("intrinsic: names of temporary files;")
    assert report["hazards"] == [] and report["failed_runs"] == 0
