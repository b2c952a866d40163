"""A missing prerequisite is a hazard with its edge and its rule's line, found from the
declared graph where the traces show no overlap; the steps that lack one edge are one
culprit; the fix for a directory no rule makes gives it a rule."""

from __future__ import annotations

import subprocess

import pytest
from msgspec import structs

from fuzzer.explain.from_log import Declared, explain_failure
from fuzzer.explain.shared_cause import one_per_hazard
from fuzzer.findings import of_culprit
from fuzzer.fix.patch import apply
from fuzzer.fix.prerequisite import order_only
from fuzzer.fix.tree import NoPatch, Tree
from fuzzer.model import Culprit, Hazard, Kind
from fuzzer.trace.declared import declared_graph, from_make
from fuzzer.trace.hazards import MKDIR_RACE, READ_BEFORE_WRITE, find_hazards
from fuzzer.trace.prerequisites import declared_hazards
from fuzzer.trace.synthetic import FakeStep, synthetic_trace

from conftest import make_project

SHUFFLED = """
    all: tool
    tool: probe.o bpf.o
        cat probe.o bpf.o > tool
    config.h: config.in
        cp config.in config.h
    probe.o: probe.c config.h
        cat probe.c config.h > probe.o
    # bpf.c needs config.h too, but its rule does not say so
    bpf.o: bpf.c
        cat bpf.c config.h > bpf.o
    """
GENERATE, PROBE, BPF = "cp config.in config.h", "cat probe.c config.h > probe.o", "cat bpf.c config.h > bpf.o"


def serial_reference():
    """make's own order at -j1: config.h, probe.o, bpf.o, one after another."""
    return synthetic_trace([
        FakeStep(GENERATE, 0, 1, reads={"config.in": 0.5}, writes={"config.h": 0.9}),
        FakeStep(PROBE, 1, 2, reads={"probe.c": 1.5, "config.h": 1.6}, writes={"probe.o": 1.9}),
        FakeStep(BPF, 2, 3, reads={"bpf.c": 2.5, "config.h": 2.6}, writes={"bpf.o": 2.9}),
    ])


def shuffled_failure():
    """A shuffled order that runs bpf.o first: it finds no config.h, fails, and make stops."""
    return synthetic_trace([FakeStep(BPF, 0, 1, reads={"bpf.c": 0.5}, probes={"config.h": (0.6, False)}, exit_code=1)])


def test_a_serial_failure_on_a_generated_file_the_rule_does_not_name_is_a_hazard_with_its_edge_and_line(tmp_path):
    make_project(tmp_path, SHUFFLED, {"config.in": "x\n", "probe.c": "p\n", "bpf.c": "b\n"})
    graph = from_make("make -j{jobs}", str(tmp_path))
    traces = [serial_reference(), shuffled_failure()]
    assert find_hazards(traces, ["reference", "shuffled"], graph) == []  # never overlapped, one order only
    found = declared_hazards([], graph, traces[0], "reference", [("shuffled", traces[1])], str(tmp_path))
    rule = next(i for i, line in enumerate((tmp_path / "Makefile").read_text().splitlines(), 1)
                if line.startswith("bpf.o:"))
    assert [(h.type, h.file, h.reader, h.writer, h.missing_edge, h.rule, h.runs, h.traced) for h in found] == [
        (READ_BEFORE_WRITE, "config.h", BPF, GENERATE, "bpf.o: config.h", f"Makefile:{rule}",
         [], ["reference", "shuffled"])]


def test_no_hazard_without_a_graph_or_where_the_graph_declares_the_edge(tmp_path):
    traces = [serial_reference(), shuffled_failure()]
    assert declared_hazards([], None, traces[0], "reference", [("shuffled", traces[1])], str(tmp_path)) == ()
    make_project(tmp_path, SHUFFLED.replace("bpf.o: bpf.c", "bpf.o: bpf.c config.h"),
                 {"config.in": "x\n", "probe.c": "p\n", "bpf.c": "b\n"})
    graph = from_make("make -j{jobs}", str(tmp_path))
    assert declared_hazards([], graph, traces[0], "reference", [("shuffled", traces[1])], str(tmp_path)) == ()


NAMES = ("main", "table", "hash", "parse", "format", "store", "util")
MKDIR = "mkdir -p build/object"


def compile_of(name: str) -> str:
    return f"cc -c src/{name}.c -o build/object/{name}.o"


def test_seven_compiles_missing_one_directory_are_one_culprit_listing_them_with_one_identity():
    hazard = Hazard(MKDIR_RACE, "build/object/", compile_of("hash"), MKDIR,
                    steps=sorted([MKDIR, *map(compile_of, NAMES)]))
    culprits = [Culprit(compile_of(n), ["cc"], ".", [f"build/object/{n}.o"], Kind.RACE, other_step=MKDIR)
                for n in NAMES[:4]]
    unrelated = Culprit("gen.py", ["gen.py"], ".", ["x.c"], Kind.INTRINSIC)
    grouped = one_per_hazard([*culprits, unrelated], [hazard])
    assert [(c.command, len(c.steps), len(c.outputs)) for c in grouped] == [
        (compile_of("main"), 7, 4), ("gen.py", 0, 1)]
    assert set(grouped[0].steps) == set(map(compile_of, NAMES))
    other_first = one_per_hazard([*reversed(culprits)], [hazard])  # another campaign, another compile failing first
    assert of_culprit(other_first[0]).id == of_culprit(grouped[0]).id
    [alone] = one_per_hazard([culprits[2]], [hazard])  # one compile failed (or one failed run's log named it)
    assert (set(alone.steps), of_culprit(alone).id) == (set(map(compile_of, NAMES)), of_culprit(grouped[0]).id)
    two = structs.replace(hazard, steps=[MKDIR, compile_of("hash")])
    assert one_per_hazard([culprits[2]], [two]) == [culprits[2]]  # its hazard names no other step: one step


PHONY_DIRS = """
    all: dirs app
    dirs:
        mkdir -p build/object
    app: build/object/main.o
        cat build/object/main.o > app
    build/object/%.o: src/%.c
        cat $< > $@
    """


def test_a_directory_no_rule_makes_gets_an_order_only_prerequisite_and_a_rule_that_builds(tmp_path):
    (tmp_path / "src").mkdir()
    make_project(tmp_path, PHONY_DIRS, {"src/main.c": "m\n"})
    hazard = Hazard(MKDIR_RACE, "build/object/", "cat src/main.c > build/object/main.o", MKDIR,
                    finding_id="abc")
    remedy = order_only(hazard, Tree(tmp_path, "make -j{jobs}"))
    apply(remedy.patch, tmp_path)
    lines = (tmp_path / "Makefile").read_text().splitlines()
    assert "build/object/%.o: src/%.c | build/object" in lines
    assert lines[lines.index("build/object:") + 1] == "\tmkdir -p $@"
    built = subprocess.run(["make", "-j4", "app"], cwd=tmp_path, capture_output=True, text=True)  # no `dirs`
    assert (built.returncode, (tmp_path / "app").read_text()) == (0, "m\n")


def test_a_mkdir_hazard_lists_every_step_the_graph_leaves_unordered_with_the_directory(tmp_path):
    """The traces showed one compile racing the mkdir; make's database shows the others
    lack the same edge, and the link, which writes elsewhere, is not among them."""
    (tmp_path / "src").mkdir()
    make_project(tmp_path, PHONY_DIRS.replace("build/object/main.o", "build/object/main.o build/object/util.o"),
                 {"src/main.c": "m\n", "src/util.c": "u\n"})
    graph = from_make("make -j{jobs}", str(tmp_path))
    main, util = "cat src/main.c > build/object/main.o", "cat src/util.c > build/object/util.o"
    link = "cat build/object/main.o build/object/util.o > app"
    reference = synthetic_trace([
        FakeStep(MKDIR, 0, 1, mkdirs={"build": 0.4, "build/object": 0.5}),
        FakeStep(main, 1, 2, reads={"src/main.c": 1.5}, writes={"build/object/main.o": 1.9}),
        FakeStep(util, 2, 3, reads={"src/util.c": 2.5}, writes={"build/object/util.o": 2.9}),
        FakeStep(link, 3, 4, reads={"build/object/main.o": 3.1, "build/object/util.o": 3.2}, writes={"app": 3.9}),
    ])
    raced = Hazard(MKDIR_RACE, "build/object/", main, MKDIR, steps=[MKDIR, main])
    [found] = declared_hazards([raced], graph, reference, "reference", [], str(tmp_path))
    assert (found.missing_edge, found.steps) == ("build/object/main.o build/object/util.o: | build/object",
                                                 sorted([MKDIR, main, util]))
    assert found.rule.startswith("Makefile:") and found.rules == [found.rule]  # one pattern rule makes both


# fossil's shape: tools linked into bld/ by two rule lines, none after `bld`; a tool's run
# writes into bld/ too, but after its link, which the edge orders: it needs none of its own
TOOLS = """
    all: bld app
    bld:
        -mkdir bld
    bld/mkindex: mkindex.c
        cp mkindex.c bld/mkindex
    bld/translate bld/makeheaders: bld/%: %.c
        cp $< $@
    bld/index.h: bld/mkindex
        sh bld/mkindex > bld/index.h
    app: bld/index.h bld/translate bld/makeheaders
        cat bld/index.h > app
    """
LINKS = {tool: f"cp {tool}.c bld/{tool}" for tool in ("mkindex", "translate", "makeheaders")}


def test_one_directory_several_rules_lack_is_one_hazard_naming_every_rule_and_no_step_after_them(tmp_path):
    make_project(tmp_path, TOOLS, {f"{tool}.c": "echo t\n" for tool in LINKS})
    graph = from_make("make -j{jobs}", str(tmp_path))
    run_index = "sh bld/mkindex > bld/index.h"
    reference = synthetic_trace([
        FakeStep("mkdir bld", 0, 1, mkdirs={"bld": 0.5}),
        *(FakeStep(link, i + 1, i + 2, reads={f"{tool}.c": i + 1.5}, writes={f"bld/{tool}": i + 1.9})
          for i, (tool, link) in enumerate(LINKS.items())),
        FakeStep(run_index, 5, 6, reads={"bld/mkindex": 5.1}, writes={"bld/index.h": 5.9}),
    ])
    raced = Hazard(MKDIR_RACE, "bld/", LINKS["translate"], "mkdir bld", steps=["mkdir bld", LINKS["translate"]])
    [found] = declared_hazards([raced], graph, reference, "reference", [], str(tmp_path))
    lines = (tmp_path / "Makefile").read_text().splitlines()
    explicit, pattern = (f"Makefile:{lines.index(rule) + 1}" for rule in ("bld/mkindex: mkindex.c",
                                                                         "bld/translate bld/makeheaders: bld/%: %.c"))
    assert found.missing_edge == "bld/translate bld/makeheaders bld/mkindex: | bld"
    assert (found.rule, found.rules) == (pattern, [pattern, explicit])
    assert found.steps == sorted(["mkdir bld", *LINKS.values()])  # not the index's run: it waits for its link


def test_every_reader_missing_one_generated_file_is_listed_with_its_rule(tmp_path):
    """Two objects read config.h and neither rule names it: one edge, both rules."""
    make_project(tmp_path, SHUFFLED.replace("probe.o: probe.c config.h", "probe.o: probe.c"),
                 {"config.in": "x\n", "probe.c": "p\n", "bpf.c": "b\n"})
    graph = from_make("make -j{jobs}", str(tmp_path))
    found = declared_hazards([], graph, serial_reference(), "reference", [("shuffled", shuffled_failure())],
                             str(tmp_path))
    lines = (tmp_path / "Makefile").read_text().splitlines()
    bpf, probe = (f"Makefile:{lines.index(rule) + 1}" for rule in ("bpf.o: bpf.c", "probe.o: probe.c"))
    assert [(h.reader, h.missing_edge, h.rules, h.steps) for h in found] == [
        (BPF, "bpf.o probe.o: config.h", [bpf, probe], sorted([GENERATE, PROBE, BPF]))]


NINJA_RULES = """\
rule gen
  command = cp $in $out
rule cc
  command = cat $in gen/f.h > $out
"""
NINJA_BUILD = """\
include rules.ninja
builddir = out

build gen/f.h: gen ../f.conf
# main.c includes gen/f.h, and its statement does not say so
build main.o: cc ../main.c
build $builddir/x.o: cc ../main.c
"""
GEN, MAIN = "cp ../f.conf gen/f.h", "cat ../main.c gen/f.h > main.o"


@pytest.mark.needs("ninja")
def test_a_ninja_hazard_names_the_line_of_the_build_statement_that_lacks_the_edge(tmp_path):
    """ninja -C build: the edge and the statement's line are the tree's paths; a statement
    in an included file or with a variable in its output gets no line it cannot be sure of."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "rules.ninja").write_text(NINJA_RULES)
    (tmp_path / "build" / "build.ninja").write_text(NINJA_BUILD + "subninja sub.ninja\n")
    (tmp_path / "build" / "sub.ninja").write_text("build util.o: cc ../main.c\n")
    graph = declared_graph("ninja -C build -j{jobs}", str(tmp_path))
    reference = synthetic_trace([
        FakeStep(GEN, 0, 1, reads={"f.conf": 0.5}, writes={"build/gen/f.h": 0.9}),
        FakeStep(MAIN, 1, 2, reads={"main.c": 1.5, "build/gen/f.h": 1.6}, writes={"build/main.o": 1.9}),
    ])
    raced = Hazard(READ_BEFORE_WRITE, "build/gen/f.h", MAIN, GEN, steps=sorted([GEN, MAIN]))
    [found] = declared_hazards([raced], graph, reference, "reference", [], str(tmp_path))
    line = NINJA_BUILD.splitlines().index("build main.o: cc ../main.c") + 1
    assert (found.missing_edge, found.rule) == ("build/main.o: build/gen/f.h", f"build/build.ninja:{line}")
    assert graph.rule_of("build/util.o", str(tmp_path)) == "build/sub.ninja:1"
    assert graph.rule_of("build/out/x.o", str(tmp_path)) == ""  # `$builddir/x.o`: not expanded, not guessed


@pytest.mark.needs("ninja")
def test_a_ninja_statement_that_declares_the_edge_gets_none(tmp_path):
    (tmp_path / "build.ninja").write_text(NINJA_RULES + "build gen/f.h: gen f.conf\nbuild main.o: cc main.c | gen/f.h\n")
    graph = declared_graph("ninja", str(tmp_path))
    reference = synthetic_trace([
        FakeStep("cp f.conf gen/f.h", 0, 1, reads={"f.conf": 0.5}, writes={"gen/f.h": 0.9}),
        FakeStep("cat main.c gen/f.h > main.o", 1, 2, reads={"main.c": 1.5, "gen/f.h": 1.6}, writes={"main.o": 1.9}),
    ])
    raced = Hazard(READ_BEFORE_WRITE, "gen/f.h", "cat main.c gen/f.h > main.o", "cp f.conf gen/f.h")
    [found] = declared_hazards([raced], graph, reference, "reference", [], str(tmp_path))
    assert (found.missing_edge, found.rule) == ("", "")


SHUFFLED_LOG = """cat bpf.c config.h > bpf.o
cat: config.h: No such file or directory
make: *** [Makefile:10: bpf.o] Error 1
"""


def test_a_failed_runs_log_gets_the_edge_the_graph_lacks_and_its_rule(tmp_path):
    make_project(tmp_path, SHUFFLED, {"config.in": "x\n", "probe.c": "p\n", "bpf.c": "b\n"})
    declared = Declared(from_make("make -j{jobs}", str(tmp_path)), str(tmp_path))
    finding = explain_failure(SHUFFLED_LOG, 4, serial_reference(), declared)
    rule = next(i for i, line in enumerate((tmp_path / "Makefile").read_text().splitlines(), 1)
                if line.startswith("bpf.o:"))
    assert (finding.culprit.command, finding.culprit.kind, finding.culprit.other_step) == (BPF, Kind.RACE, GENERATE)
    hazard = finding.hazard
    assert (hazard.type, hazard.file, hazard.missing_edge, hazard.rule) == (
        READ_BEFORE_WRITE, "config.h", "bpf.o: config.h", f"Makefile:{rule}")
    without_graph = explain_failure(SHUFFLED_LOG, 4, serial_reference())
    assert (without_graph.hazard.missing_edge, without_graph.hazard.rule) == ("", "")


def test_a_failed_runs_log_on_an_edge_the_graph_declares_is_no_missing_edge_and_no_hazard(tmp_path):
    """make would have waited for config.h: it was missing for another reason, which the
    log does not tell, so the failing step is named with no kind and no hazard is made."""
    make_project(tmp_path, SHUFFLED.replace("bpf.o: bpf.c", "bpf.o: bpf.c config.h"),
                 {"config.in": "x\n", "probe.c": "p\n", "bpf.c": "b\n"})
    declared = Declared(from_make("make -j{jobs}", str(tmp_path)), str(tmp_path))
    finding = explain_failure(SHUFFLED_LOG, 4, serial_reference(), declared)
    assert finding.hazard is None
    assert (finding.culprit.command, finding.culprit.kind, finding.culprit.other_step) == (BPF, Kind.UNKNOWN, GENERATE)


@pytest.mark.needs("make")
def test_the_fix_of_a_directory_several_rules_lack_edits_every_rule_and_a_reversed_order_builds(tmp_path):
    make_project(tmp_path, TOOLS, {f"{tool}.c": "echo t\n" for tool in LINKS})
    lines = (tmp_path / "Makefile").read_text().splitlines()
    rules = [f"Makefile:{lines.index(rule) + 1}" for rule in ("bld/translate bld/makeheaders: bld/%: %.c",
                                                             "bld/mkindex: mkindex.c")]
    hazard = Hazard(MKDIR_RACE, "bld/", LINKS["translate"], "mkdir bld", rules=rules, rule=rules[0],
                    finding_id="abc")
    broken = subprocess.run(["make", "--shuffle=reverse"], cwd=tmp_path, capture_output=True, text=True)
    assert broken.returncode != 0  # app's prerequisites first: a tool before bld/
    subprocess.run(["rm", "-rf", "bld", "app"], cwd=tmp_path, check=True)
    apply(order_only(hazard, Tree(tmp_path, "sh -c 'make'")).patch, tmp_path)  # below a wrapper: by the rules' lines
    patched = (tmp_path / "Makefile").read_text().splitlines()
    assert "bld/mkindex: mkindex.c | bld" in patched and "bld/translate bld/makeheaders: bld/%: %.c | bld" in patched
    built = subprocess.run(["make", "--shuffle=reverse"], cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr


def test_rule_lines_below_a_wrapper_that_the_source_does_not_hold_give_no_patch(tmp_path):
    make_project(tmp_path, TOOLS, {})
    hazard = Hazard(MKDIR_RACE, "bld/", LINKS["translate"], "mkdir bld", rules=["gen/rules.mk:3"], finding_id="abc")
    with pytest.raises(NoPatch, match="gen/rules.mk:3"):
        order_only(hazard, Tree(tmp_path, "sh -c './configure && make'"))
