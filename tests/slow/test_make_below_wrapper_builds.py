"""make below a wrapper (issue 30, fossil: `sh -c './configure && make'`): whether a make ran
decides the shuffle axis, and each make the trace saw has its database read."""

from __future__ import annotations

import json
import subprocess

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


# `./configure && make`, and a make of its own in tools/: the top make runs a sub-make in
# lib/ (a phony target: in a built tree too, as make -pn reads only what a dry run reaches); the wrapper exports NAME, which names a target (the database is read in the
# environment the make ran in)
CONFIGURE = """#!/bin/sh
printf '.PHONY: all lib\\nall: lib $(NAME).txt\\nlib:\\n\\t$(MAKE) -C lib\\n$(NAME).txt: lib\\n\\tcat lib/liba.txt > $@\\n' > Makefile
"""
LIB = "liba.txt: a.in\n\tcp a.in liba.txt\n"
TOOLS = "all: gen\n\ngen: gen.in\n\tcp gen.in gen\n"
WRAPPER = "./configure && export NAME=app && make && cd tools && make"


@pytest.mark.needs("strace")
def test_the_database_of_every_make_below_a_wrapper_is_read_where_and_as_it_ran(tmp_path):
    from fuzzer.tools import strace
    from fuzzer.trace.declared import declared_graph
    from fuzzer.trace.steps import load_trace

    tree = tmp_path / "tree"
    for path, text in {"configure": CONFIGURE, "lib/Makefile": LIB, "lib/a.in": "a\n", "tools/Makefile": TOOLS,
                       "tools/gen.in": "g\n"}.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    (tree / "configure").chmod(0o755)
    trace_path = str(tmp_path / "trace.txt")
    subprocess.run(strace.wrap(["sh", "-c", WRAPPER], trace_path), cwd=tree, check=True, capture_output=True)
    assert (tree / "app.txt").read_text() == "a\n" and (tree / "tools" / "gen").is_file()
    trace = load_trace(trace_path, str(tree))
    assert declared_graph(f"sh -c '{WRAPPER}'", str(tree)) is None  # the command alone is no make call
    graph = declared_graph(f"sh -c '{WRAPPER}'", str(tree), trace)
    assert graph is not None
    assert graph.prerequisites["app.txt"] == {"lib"}  # NAME from the wrapper's environment
    assert graph.prerequisites["lib/liba.txt"] == {"lib/a.in"}  # the sub-make's, in lib/
    assert graph.prerequisites["tools/gen"] == {"tools/gen.in"}  # the second top make's, in tools/
    assert {graph.rule_of(t, str(tree)) for t in ("lib/liba.txt", "tools/gen")} == {"lib/Makefile:1",
                                                                                   "tools/Makefile:3"}
