"""Root divergent steps: properties on synthetic traces, then real races."""

from __future__ import annotations

from fuzzer.trace.graph import EXISTENCE, find_roots

from test_trace_graph import need_strace, traced_make


MISSING_DEP = (
    "all: gen.h out.txt\ngen.h:\n\tsleep 0.5; echo '#define X 1' > gen.h\nout.txt:\n\tcat gen.h > out.txt || true\n"
)


def test_real_missing_dependency(tmp_path):
    need_strace()
    ref = traced_make(tmp_path / "ref", MISSING_DEP, "-j1")
    div = traced_make(tmp_path / "div", MISSING_DEP, "-j2")
    assert (tmp_path / "ref" / "out.txt").read_bytes() != (tmp_path / "div" / "out.txt").read_bytes()
    root = find_roots(ref, div, {"out.txt"})[0]
    assert root.command == "cat gen.h > out.txt || true"
    assert any(d.how == EXISTENCE and d.file == "gen.h" and d.other.endswith("> gen.h") for d in root.input_differences)
