"""Root divergent steps: properties on synthetic traces, then real races."""

from __future__ import annotations

import pytest

from fuzzer.trace.graph import EXISTENCE, find_roots

from test_trace_graph import traced_make


MISSING_DEP = (
    "all: gen.h out.txt\ngen.h:\n\tsleep 0.5; echo '#define X 1' > gen.h\nout.txt:\n\tcat gen.h > out.txt || true\n"
)


@pytest.mark.needs("strace")
def test_real_missing_dependency(tmp_path):
    ref = traced_make(tmp_path / "ref", MISSING_DEP, "-j1")
    div = traced_make(tmp_path / "div", MISSING_DEP, "-j2")
    assert (tmp_path / "ref" / "out.txt").read_bytes() != (tmp_path / "div" / "out.txt").read_bytes()
    root = find_roots(ref, div, {"out.txt"})[0]
    assert root.command == "cat gen.h > out.txt || true"
    assert any(d.how == EXISTENCE and d.file == "gen.h" and d.other.endswith("> gen.h") for d in root.input_differences)


COPY_INTO_INHERITED = (
    "out.txt: stable.txt\n\t(cat stable.txt; echo \"flags=$$MAKEFLAGS\") > out.txt\n"
    "stable.txt:\n\techo stable > stable.txt\n"
)


@pytest.mark.needs("strace")
def test_a_file_cat_copies_into_is_not_the_copy_of_an_identical_input(tmp_path):
    """GNU cat copies stable.txt with copy_file_range into the subshell's out.txt, then the
    subshell appends what differs: the step that wrote stable.txt, the same in both builds,
    was named the culprit."""
    ref = traced_make(tmp_path / "ref", COPY_INTO_INHERITED, "-j1")
    div = traced_make(tmp_path / "div", COPY_INTO_INHERITED, "-j2")
    assert (tmp_path / "ref" / "out.txt").read_bytes() != (tmp_path / "div" / "out.txt").read_bytes()
    assert "copy_file_range(" in (tmp_path / "div" / "trace.txt").read_text()  # cat copied, as GNU cat 9 does
    (root,) = find_roots(ref, div, {"out.txt"}, identical={"stable.txt", "Makefile"})
    assert root.command.startswith("(cat stable.txt;")
    assert root.chain == ("out.txt",)
