"""Hazards: a conflict counts only between steps shown to be unordered (an overlap in some
run, or opposite orders in two runs). Properties on synthetic traces, then real make."""

from __future__ import annotations

import pytest

from fuzzer.trace.hazards import WRITE_WRITE, find_hazards

from test_trace_graph import traced_make


# --- real make ------------------------------------------------------------------------

APPEND_RACE = "all: a b\na:\n\techo a >> log.txt; sleep 0.1\nb:\n\techo b >> log.txt; sleep 0.1\n"


GOOD_DEP = "all: out.txt\ngen.h:\n\tsleep 0.1; echo '#define X 1' > gen.h\nout.txt: gen.h\n\tcat gen.h > out.txt\n"


RECIPE_LINES = (
    "all: libx.a x.lo\n"
    "libx.a: a.o b.o\n\tar rc libx.a a.o b.o\n\tranlib libx.a\n"
    "%.o:\n\techo $@ > $@\n"
    "x.lo: | objs\n\techo x > objs/x.o\n\tmv objs/x.o x.lo\n"
    "objs:\n\tmkdir objs\n"
)


@pytest.mark.needs("strace")
def test_real_append_race_is_a_write_write_hazard(tmp_path):
    hazards = find_hazards([traced_make(tmp_path / "w", APPEND_RACE, "-j2")])
    assert [(h.type, h.file) for h in hazards] == [(WRITE_WRITE, "log.txt")]


@pytest.mark.needs("strace")
def test_real_correct_dependencies_and_recipe_lines_have_no_hazard(tmp_path):
    assert find_hazards([traced_make(tmp_path / "w", GOOD_DEP, "-j2")]) == []
    traces = [traced_make(tmp_path / f"r{j}", RECIPE_LINES, f"-j{j}") for j in (1, 4)]
    assert find_hazards(traces) == []


CHAIN = ("all: k.h\nk.h: t.h\nt.h: s.h\n"
         "k.h t.h s.h: words\n\tfor f in s t k; do cp words $$f.h.tmp; mv -f $$f.h.tmp $$f.h; done\n")


@pytest.mark.needs("strace")
def test_real_recipe_run_three_times_in_a_chain_is_no_hazard(tmp_path):
    from fuzzer.trace.declared import declared_graph

    traces = []
    for jobs in ("-j1", "-j4"):
        (tmp_path / jobs).mkdir()
        (tmp_path / jobs / "words").write_text("let if then\n")
        traces.append(traced_make(tmp_path / jobs / "w", CHAIN.replace("words", "../words"), jobs))
    assert all(sum(s.command.startswith("for f in") for s in t.steps) == 3 for t in traces)  # once per target
    assert find_hazards(traces, ["run 1", "run 2"]) == []
    graph = declared_graph("make -j{jobs}", str(tmp_path / "-j1" / "w"))
    assert graph is not None and "s.h" in graph.upstream("k.h")
    assert find_hazards(traces, ["run 1", "run 2"], graph) == []
