"""`buildfuzz fix` beyond make: a missing prerequisite added where CMakeLists.txt declares
the step (`DEPENDS` of its custom command, or `add_dependencies` for a target's compile),
the edge added to a hand-written build.ninja's statement (`|` or `||`), an intrinsic custom
command run under `${CMAKE_COMMAND} -E env`. The patches proven by rebuilds are in
tests/realbuild/test_fix_cmake_real.py and tests/slow/test_fix_cmake_builds.py."""

import textwrap

import pytest

from fuzzer.fix import cmake, cmakelists, ninja
from fuzzer.fix.patch import apply
from fuzzer.fix.tree import CMAKE, MAKE, NINJA, NoPatch, Tree
from fuzzer.model import Culprit, Hazard

WORKSPACE = "/ws/src"
CONFIGURE = "cmake -S . -B build -G Ninja >/dev/null && cmake --build build -j {jobs}"
GENERATED = """\
    cmake_minimum_required(VERSION 3.13)
    project(stamp C)

    add_custom_command(
      OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mkversion.sh ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h
      DEPENDS mkversion.sh)  # the generator
    add_custom_command(OUTPUT banner.c
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mkbanner.sh "${CMAKE_CURRENT_BINARY_DIR}/gen/version.h" banner.c)
    add_custom_target(version_header ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h)
      add_executable(stamp
        src/main.c banner.c)
    """


def _tree(tmp_path, cmakelists_text: str, command: str = CONFIGURE) -> Tree:
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent(cmakelists_text))
    return Tree(tmp_path, command, WORKSPACE)


def _changed(remedy) -> list[str]:
    return [line for line in remedy.patch.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _hazard(reader: str, file: str = "build/gen/version.h") -> Hazard:
    writer = f"cd {WORKSPACE}/build && sh {WORKSPACE}/mkversion.sh {WORKSPACE}/build/gen/version.h"
    return Hazard("read-before-write", file, reader, writer, finding_id="0123456789ab")


def test_cmake_calls_are_read_with_their_lines_quotes_and_keywords(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(textwrap.dedent(GENERATED))
    calls = cmakelists.calls(tmp_path / "CMakeLists.txt", ".")
    assert [c.name for c in calls] == ["cmake_minimum_required", "project", "add_custom_command",
                                       "add_custom_command", "add_custom_target", "add_executable"]
    first, second = calls[2], calls[3]
    assert (first.first, first.last) == (3, 6) and [a.word for a in first.section("DEPENDS")] == ["mkversion.sh"]
    assert [a.word for a in second.commands()[0]][2] == "${CMAKE_CURRENT_SOURCE_DIR}/mkbanner.sh"
    assert second.args[5].word == "${CMAKE_CURRENT_BINARY_DIR}/gen/version.h"  # the quotes taken off
    assert cmakelists.expand("banner.c", second, "build") == "build/banner.c"  # an OUTPUT: in the binary dir
    assert cmakelists.expand("${CMAKE_CURRENT_SOURCE_DIR}/mkbanner.sh", second, "build") == "mkbanner.sh"
    assert cmakelists.expand("${SOMEWHERE}/x", second, "build") == ""  # other variables: not matched


def test_a_custom_command_that_reads_a_generated_file_gains_it_in_depends(tmp_path):
    tree = _tree(tmp_path, GENERATED)
    reader = f"cd {WORKSPACE}/build && sh {WORKSPACE}/mkbanner.sh {WORKSPACE}/build/gen/version.h banner.c"
    remedy = cmake.missing_dependency(_hazard(reader), tree)
    assert _changed(remedy) == [
        '-  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mkbanner.sh "${CMAKE_CURRENT_BINARY_DIR}/gen/version.h" banner.c)',
        '+  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mkbanner.sh "${CMAKE_CURRENT_BINARY_DIR}/gen/version.h" banner.c'
        ' DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h)']
    apply(remedy.patch, tmp_path)
    with pytest.raises(NoPatch, match="already DEPENDS"):
        cmake.missing_dependency(_hazard(reader), Tree(tmp_path, CONFIGURE, WORKSPACE))


def test_a_targets_compile_gets_add_dependencies_after_the_target_in_its_indentation(tmp_path):
    tree = _tree(tmp_path, GENERATED)
    compile_line = (f"/usr/bin/cc -I{WORKSPACE}/build/gen -o CMakeFiles/stamp.dir/src/main.c.o "
                    f"-c {WORKSPACE}/src/main.c")
    remedy = cmake.missing_dependency(_hazard(compile_line), tree)
    assert _changed(remedy) == ["+  add_dependencies(stamp version_header)"]  # after `    src/main.c banner.c)`
    again = _tree(tmp_path, GENERATED + "add_dependencies(stamp other)\n")
    assert _changed(cmake.missing_dependency(_hazard(compile_line), again))[-1] == \
        "+add_dependencies(stamp other version_header)"
    unwrapped = _tree(tmp_path, GENERATED.replace("add_custom_target(version_header ALL", "add_custom_target(x ALL")
                      .replace("DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gen/version.h)", "DEPENDS banner.c)"))
    with pytest.raises(NoPatch, match="target_sources"):
        cmake.missing_dependency(_hazard(compile_line), unwrapped)


def test_a_file_no_custom_command_makes_has_no_cmake_patch(tmp_path):
    tree = _tree(tmp_path, GENERATED)
    with pytest.raises(NoPatch, match="no add_custom_command has build/other.h"):
        cmake.missing_dependency(_hazard("sh mkbanner.sh", file="build/other.h"), tree)
    with pytest.raises(NoPatch, match="CMake build directory"):
        cmake.missing_dependency(_hazard("sh x"), _tree(tmp_path, GENERATED, "cmake . && make"))


@pytest.mark.parametrize("stabilisers, prefix", [
    (["PYTHONHASHSEED"], "${CMAKE_COMMAND} -E env PYTHONHASHSEED=0"),
    (["ASLR", "PYTHONHASHSEED"], "${CMAKE_COMMAND} -E env PYTHONHASHSEED=0 setarch ${CMAKE_HOST_SYSTEM_PROCESSOR} -R"),
])
def test_an_intrinsic_custom_command_runs_under_cmake_e_env(tmp_path, stabilisers, prefix):
    tree = _tree(tmp_path, """\
        add_custom_command(OUTPUT k1.c
          COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/gen.py k1.c
          DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/gen.py)
        """)
    culprit = Culprit(f"cd {WORKSPACE}/build && python3 {WORKSPACE}/gen.py k1.c", [], "build", ["build/k1.c"],
                      "intrinsic", stabilized_by=stabilisers, finding_id="0123456789ab")
    remedy = cmake.stabiliser_env(culprit, tree)
    assert _changed(remedy)[1] == f"+  COMMAND {prefix} python3 ${{CMAKE_CURRENT_SOURCE_DIR}}/gen.py k1.c"
    assert "sort before numbering" in remedy.upstream
    with pytest.raises(NoPatch, match="fixed clock"):
        cmake.stabiliser_env(Culprit(culprit.command, [], "build", ["build/k1.c"], "intrinsic",
                                     stabilized_by=["FAKETIME"]), tree)


@pytest.mark.parametrize("line, order_only, expected", [
    ("build main.o: cc main.c", False, "build main.o: cc main.c | gen/a.h"),
    ("build main.o: cc main.c | x.h", False, "build main.o: cc main.c | x.h gen/a.h"),
    ("build main.o: cc main.c || obj", False, "build main.o: cc main.c | gen/a.h || obj"),
    ("build main.o: cc main.c || obj", True, "build main.o: cc main.c || obj gen/a.h"),
    ("build main.o | main.d: cc main.c", True, "build main.o | main.d: cc main.c || gen/a.h"),
])
def test_a_ninja_edge_is_added_to_the_build_statements_inputs(line, order_only, expected):
    assert ninja.with_input(line, "gen/a.h", order_only) == expected


NINJA_FILE = """\
rule gen
  command = python3 gen.py $out
rule cc
  command = gcc -MMD -MF $out.d -c $in -o $out
  depfile = $out.d
rule plain
  command = gcc -c $in -o $out

build gen/a.h: gen gen.py
build main.o: cc main.c
build util.o: plain util.c
"""


@pytest.mark.parametrize("reader, edge", [
    ("gcc -MMD -MF main.o.d -c main.c -o main.o", "+build main.o: cc main.c || gen/a.h"),  # depfile: order-only
    ("gcc -c util.c -o util.o", "+build util.o: plain util.c | gen/a.h"),  # no depfile: implicit
])
def test_a_hand_written_build_ninja_gets_the_edge_its_rule_needs(tmp_path, reader, edge):
    (tmp_path / "build.ninja").write_text(NINJA_FILE)
    tree = Tree(tmp_path, "ninja -j{jobs}", WORKSPACE)
    assert tree.system == NINJA
    assert _changed(ninja.missing_edge(_hazard(reader, file="gen/a.h"), tree))[1] == edge


def test_a_build_ninja_in_another_directory_names_its_files_from_there(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "build.ninja").write_text(NINJA_FILE)
    tree = Tree(tmp_path, "ninja -C out -j{jobs}", WORKSPACE)
    hazard = _hazard(f"gcc -c {WORKSPACE}/out/util.c -o util.o", file="out/gen/a.h")
    remedy = ninja.missing_edge(hazard, tree)
    assert remedy.file == "out/build.ninja" and _changed(remedy)[1] == "+build util.o: plain util.c | gen/a.h"


def test_a_generated_build_ninja_is_not_edited(tmp_path):
    (tmp_path / "build.ninja").write_text("# CMAKE generated file: DO NOT EDIT!\n" + NINJA_FILE)
    with pytest.raises(NoPatch, match="generated"):
        ninja.missing_edge(_hazard("gcc -c util.c -o util.o", file="gen/a.h"), Tree(tmp_path, "ninja", WORKSPACE))


def test_the_build_system_comes_from_the_command_and_the_tree(tmp_path):
    assert Tree(tmp_path, "make -j{jobs}").system == MAKE
    assert Tree(tmp_path, "ninja -C out -j{jobs}").system == NINJA
    assert Tree(tmp_path, CONFIGURE).system == ""  # no CMakeLists.txt
    assert _tree(tmp_path, GENERATED).system == CMAKE
    assert Tree(tmp_path, "sh build.sh").system == ""
