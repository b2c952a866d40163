"""`buildfuzz fix` on the CMake + Ninja and hand-written ninja scenarios: the patch proven by
rebuilding the schedule that showed the finding, then applied."""

import json
import shutil

from conftest import SCENARIOS, buildfuzz

CONFIGURE = "cmake -S . -B build -G Ninja >/dev/null && cmake --build build -j {jobs}"


def _fixed(tmp_path, scenario: str, command: str, ignore: list[str]):
    """Fuzz the scenario (4 runs: the reference, two extremes, a held target), then `buildfuzz
    fix --after 6`: both findings show in nearly every -j build, so a patch that left them
    would show in the first after-build; 0 of 6 bounds what is left below 40%."""
    tree, store, report = tmp_path / "src", tmp_path / "store", tmp_path / "report.json"
    shutil.copytree(SCENARIOS / scenario, tree, ignore=shutil.ignore_patterns("scenario.toml"))
    ignored = [a for pattern in ignore for a in ("--ignore", pattern)]
    fuzzed = buildfuzz("run", "--source", tree, "--runs", 4, "--seed", 1, "--store", store, "--quiet", *ignored,
                       "--", command)
    assert fuzzed.returncode == 1, fuzzed.stderr
    fixed = buildfuzz("fix", "--store", store, "--report-json", report, "--after", 6)
    hazards = [h for h in json.loads(report.read_text())["hazards"] if h["type"] == "read-before-write"]
    assert hazards, fixed.stdout
    return hazards[0], fixed


def _patch_lines(entry) -> list[str]:
    text = open(entry["fix"]).read()
    return [line for line in text.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_a_cmake_custom_command_missing_its_depends_is_fixed_proven_and_applied(tmp_path):
    hazard, fixed = _fixed(tmp_path, "cmake-custom-depends", CONFIGURE, ["build/.ninja_log", "build/.ninja_deps"])
    assert hazard["file"] == "build/gen/version.h"
    assert hazard["fix_status"].startswith("proven: before "), hazard["fix_status"]
    assert "after 0/6, divergence below 40% at 95%" in hazard["fix_status"]
    assert _patch_lines(hazard) == [
        "-  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/mkman.sh)",
        "+  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/mkman.sh ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h)"]
    assert fixed.returncode == 0, fixed.stdout
    assert buildfuzz("fix", "--store", tmp_path / "store", "--apply", hazard["finding_id"]).returncode == 0
    assert "mkman.sh ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h)" in (tmp_path / "src" / "CMakeLists.txt").read_text()


def test_a_hand_written_ninja_header_race_gets_its_implicit_edge_proven(tmp_path):
    """The hazard shows only in the traced rerun of a divergent run: the proof rebuilds that run's settings."""
    hazard, fixed = _fixed(tmp_path, "ninja-generated-header", "ninja -j{jobs}", [".ninja_log"])
    assert hazard["fix_status"].startswith("proven: before "), hazard["fix_status"]
    assert _patch_lines(hazard) == ["-build main.o: cc main.c", "+build main.o: cc main.c | gen/app_features.h"]
