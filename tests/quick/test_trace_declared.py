"""The declared graph: make's database read into "does the build order step A before B"."""

from __future__ import annotations

import subprocess

import pytest

from fuzzer.tools import make, ninja
from fuzzer.trace.declared import declared_graph, from_make, parse_database, parse_graph
from fuzzer.trace.hazards import find_hazards
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

DATABASE = """\
make: Entering directory '/ws'
# GNU Make 4.3
# Make data base, printed on Tue Dec  1 20:00:00 2026

# Variables

CC := gcc
# Files

# Not a target:
main.c:

main.o: main.c gen.h | obj
#  recipe to execute (from 'Makefile', line 5):
\t$(CC) -c main.c

gen.h: gen.py
#  recipe to execute (from 'Makefile', line 8):
\tpython3 gen.py > gen.h

other.o: other.c
\t$(CC) -c other.c

obj:
\tmkdir -p obj

%.o: %.c
\t$(CC) -c $<

# files hash-table stats:
# Finished Make data base on Tue Dec  1 20:00:00 2026
make: Leaving directory '/ws'
"""


def step(command: str, **accesses) -> FakeStep:
    return FakeStep(command, 0, 1, **accesses)


def steps_of(trace, *commands):
    return [next(s for s in trace.steps if s.command == c) for c in commands]


def test_the_database_orders_a_step_after_what_its_target_needs():
    graph = parse_database(DATABASE, "/ws")
    assert graph.made == {"main.o", "gen.h", "other.o", "obj"}
    assert graph.upstream("main.o") == {"main.c", "gen.h", "gen.py", "obj"}
    trace = synthetic_trace([step("python3 gen.py > gen.h", writes={"gen.h": 0.5}),
                             step("cc -c main.c", writes={"main.o": 0.5}),
                             step("cc -c other.c", writes={"other.o": 0.5}),
                             step("cat gen.h > log", reads={"gen.h": 0.1}, writes={"log": 0.5})])
    gen, main, other, log = steps_of(trace, "python3 gen.py > gen.h", "cc -c main.c", "cc -c other.c",
                                     "cat gen.h > log")
    assert graph.orders(gen, main) and graph.orders(main, gen)  # either argument order
    assert not graph.orders(gen, other)  # no path between them
    assert not graph.orders(gen, log)  # `log` is no target: nothing declared about its writer


def test_a_step_writing_several_targets_is_ordered_only_if_every_one_is():
    graph = parse_database(DATABASE, "/ws")
    trace = synthetic_trace([step("gen both", writes={"gen.h": 0.5, "other.o": 0.6}),
                             step("cc", writes={"main.o": 0.5})])
    both, main = steps_of(trace, "gen both", "cc")
    assert not graph.orders(both, main)  # other.o is not upstream of main.o


def test_a_database_without_files_is_no_graph():
    assert parse_database("make: *** No targets.  Stop.\n", "/ws") is None


def test_builds_that_are_not_one_make_call_declare_nothing(tmp_path):
    (tmp_path / "Makefile").write_text("all:\n\ttrue\n")
    assert from_make("sh build.sh", str(tmp_path)) is None
    assert from_make("./configure && make -j{jobs}", str(tmp_path)) is None
    assert make.make_arguments(["make", "-j8", "--shuffle=3", "-l2", "check", "V=1"]) == ["check", "V=1"]
    assert from_make("make -j{jobs}", str(tmp_path / "missing")) is None


@pytest.mark.needs("make")
def test_real_make_database_with_a_chain_and_order_only_prerequisites(tmp_path):
    (tmp_path / "Makefile").write_text(
        "all: app\napp: main.o | out\n\tcat main.o > app\nmain.o: main.c keys.h\n\tcat main.c keys.h > main.o\n"
        "keys.h: toks.h\ntoks.h: syms.h\n"
        "keys.h toks.h syms.h: words\n\tcp words keys.h; cp words toks.h; cp words syms.h\n"
        "out:\n\tmkdir -p out\nsub/x.o: ; touch $@\n")
    for name in ("main.c", "words"):
        (tmp_path / name).write_text(name)
    subprocess.run(["make", "-s"], cwd=tmp_path, check=True, capture_output=True)
    graph = from_make("make -j{jobs} all", str(tmp_path))
    assert graph is not None and graph.source == "make's database"
    assert {"syms.h", "toks.h", "words", "keys.h", "main.o", "out"} <= graph.upstream("app")
    assert "syms.h" in graph.upstream("keys.h") and "keys.h" not in graph.upstream("syms.h")


def test_hazards_skip_what_the_database_orders():
    """A compile seen overlapping its generator (a lingering child, a clock step) is still
    ordered when the Makefile says main.o needs gen.h."""
    trace = synthetic_trace([FakeStep("python3 gen.py > gen.h", 0, 1, writes={"gen.h": 0.9}),
                             FakeStep("cc -c main.c", 0.5, 1.5, reads={"gen.h": 0.6}, writes={"main.o": 1.4})])
    assert len(find_hazards([trace])) == 1
    assert find_hazards([trace], declared=parse_database(DATABASE, "/ws")) == []


GRAPH = '''digraph ninja {
"0x1" [label="all"]
"0x2" [label="phony", shape=ellipse]
"0x2" -> "0x1"
"0x3" -> "0x2" [arrowhead=none]
"0x3" [label="gen/f.h"]
"0x4" [label="gen", shape=ellipse]
"0x4" -> "0x3"
"0x5" -> "0x4" [arrowhead=none]
"0x5" [label="f.conf"]
"0x6" [label="main.o"]
"0x7" -> "0x6" [label=" cc"]
"0x7" [label="main.c"]
"0x8" [label="app"]
"0x9" [label="link", shape=ellipse]
"0x9" -> "0x8"
"0x6" -> "0x9" [arrowhead=none]
"0x3" -> "0x9" [arrowhead=none style=dotted]
}
'''


def test_ninja_graph_builds_with_one_or_several_inputs_and_phony_targets():
    graph = parse_graph(GRAPH, "/ws/build", "/ws")
    assert graph.source == "ninja's graph"
    assert graph.made == {"build/gen/f.h", "build/main.o", "build/app"}  # `all` is phony
    assert graph.upstream("build/app") == {"build/main.o", "build/main.c", "build/gen/f.h", "build/f.conf"}
    assert ninja.graph_arguments(["ninja", "-C", "build", "-j8", "app"]) == ["-C", "build"]
    assert ninja.directory(["-C", "build"]) == "build" and ninja.graph_arguments(["make"]) is None


@pytest.mark.needs("ninja")
def test_real_ninja_graph(tmp_path):
    (tmp_path / "build.ninja").write_text(
        "rule cp\n  command = cp $in $out\nbuild g.h: cp g.in\nbuild m.o: cp m.c | g.h\nbuild all: phony m.o\n")
    for name in ("g.in", "m.c"):
        (tmp_path / name).write_text(name)
    graph = declared_graph("ninja -j{jobs}", str(tmp_path))
    assert graph is not None and graph.made == {"g.h", "m.o"} and "g.h" in graph.upstream("m.o")


def test_ninja_graph_skips_an_output_its_graph_tool_never_labels():
    """CMake's phony edges can have a second output `ninja -t graph` prints no label for."""
    graph = parse_graph(GRAPH.replace('"0x9" -> "0x8"\n', '"0x9" -> "0x8"\n"0x9" -> "0xa"\n'), "/ws/build", "/ws")
    assert graph.made == {"build/gen/f.h", "build/main.o", "build/app"}


@pytest.mark.needs("ninja")
def test_a_cmake_build_of_a_ninja_directory_reads_its_graph_and_statement_lines(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "build.ninja").write_text(
        "rule cp\n  command = cp $in $out\nbuild g.h: cp ../g.in\nbuild m.o | ${workdir}/elsewhere/m.o: cp ../m.c\n")
    command = "cmake -S . -B out -G Ninja >/dev/null && cmake --build out -j {jobs}"
    graph = declared_graph(command, str(tmp_path))
    assert graph is not None and graph.made == {"out/g.h", "out/m.o"} and "out/g.h" not in graph.upstream("out/m.o")
    assert graph.rule_of("out/m.o", str(tmp_path)) == "out/build.ninja:4"
    assert declared_graph(command.replace("out", "elsewhere"), str(tmp_path)) is None  # no build.ninja there


@pytest.mark.needs("make")
def test_a_recursive_makes_targets_are_named_in_the_directory_its_sub_make_entered(tmp_path):
    """make -pn -w prints its directory lines as comments (`# make[1]: Entering directory`):
    read as such, the sub-make's `liba.txt` is lib/liba.txt, not a target of the top."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "Makefile").write_text(".PHONY: all lib\nall: lib\nlib:\n\t$(MAKE) -C lib\n")
    (tmp_path / "lib" / "Makefile").write_text("liba.txt: a.in\n\tcp a.in liba.txt\n")
    (tmp_path / "lib" / "a.in").write_text("a\n")
    subprocess.run(["make", "-s"], cwd=tmp_path, check=True, capture_output=True)
    graph = from_make("make", str(tmp_path))
    assert graph is not None and graph.prerequisites["lib/liba.txt"] == {"lib/a.in"}
    assert "liba.txt" not in graph.prerequisites and graph.rule_of("lib/liba.txt", str(tmp_path)) == "lib/Makefile:1"
