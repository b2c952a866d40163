"""Root divergent steps: properties on synthetic traces, then real races."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzer.tools import strace
from fuzzer.trace.graph import (
    CO_WRITER,
    EXISTENCE,
    READ_ORDER,
    WRITER_TIMING,
    find_roots,
)
from fuzzer.trace.processes import Access, Process
from fuzzer.trace.steps import build_trace, load_trace
from fuzzer.trace.synthetic import FakeStep, synthetic_trace


FAST = settings(max_examples=60, deadline=None)


@st.composite
def pipelines(draw) -> list[dict]:
    """A DAG of steps in topological order: step i writes out{i} from sources and earlier outputs."""
    n = draw(st.integers(1, 8))
    specs = []
    for i in range(n):
        deps = draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set()
        sources = draw(st.sets(st.sampled_from(["a.c", "b.c", "c.h"]), max_size=2))
        specs.append({"deps": sorted(deps), "sources": sorted(sources)})
    return specs


def serial(specs: list[dict]) -> list[FakeStep]:
    """Each step starts after the previous one ended, reading its inputs then writing."""
    steps = []
    for i, spec in enumerate(specs):
        start = 10.0 * i
        reads = {f: start + 1 for f in spec["sources"]} | {f"out{d}": start + 2 for d in spec["deps"]}
        steps.append(FakeStep(f"step{i}", start, start + 5, reads=reads, writes={f"out{i}": start + 3}))
    return steps


@FAST
@given(pipelines(), st.data())
def test_roots_are_exactly_the_varying_steps_with_identical_inputs(specs, data):
    varying = data.draw(st.sets(st.integers(0, len(specs) - 1), min_size=1))
    differing: set[str] = set()
    for i, spec in enumerate(specs):  # topological order: a step differs if it varies or reads a difference
        if i in varying or any(f"out{d}" in differing for d in spec["deps"]):
            differing.add(f"out{i}")
    ref, div = synthetic_trace(serial(specs)), synthetic_trace(serial(specs))
    roots = find_roots(ref, div, differing)
    expected = {f"step{i}" for i in varying if not any(f"out{d}" in differing for d in specs[i]["deps"])}
    assert {r.command for r in roots} == expected
    for root in roots:
        assert root.input_differences == () and root.outputs and not root.failed


def test_a_deep_chain_of_consequences_leads_to_its_one_root():
    n = 3000  # deeper than Python's recursion limit
    steps = [FakeStep("gen > out0", 0, 1, writes={"out0": 0.5})] + [
        FakeStep(f"cp out{i - 1} out{i}", i, i + 0.5, reads={f"out{i - 1}": i + 0.1}, writes={f"out{i}": i + 0.2})
        for i in range(1, n)
    ]
    trace = synthetic_trace(steps)
    differing = {f"out{i}" for i in range(n)}
    (root,) = find_roots(trace, trace, differing)
    assert root.command == "gen > out0" and len(root.explains) == n
    assert root.chain == tuple(f"out{i}" for i in reversed(range(n)))


def missing_dependency_runs():
    ref = synthetic_trace(
        [
            FakeStep("python3 gen.py > gen.h", 0, 1, writes={"gen.h": 0.1}),
            FakeStep("cc -c a.c", 2, 3, reads={"a.c": 2.1, "gen.h": 2.2}, writes={"a.o": 2.5}),
            FakeStep("ld -o prog a.o", 4, 5, reads={"a.o": 4.1}, writes={"prog": 4.5}),
        ]
    )
    div = synthetic_trace(
        [
            FakeStep("python3 gen.py > gen.h", 0, 2, writes={"gen.h": 0.1}),
            FakeStep("cc -c a.c", 0.5, 1, reads={"a.c": 0.6, "gen.h": 0.7}, writes={"a.o": 0.9}),
            FakeStep("ld -o prog a.o", 4, 5, reads={"a.o": 4.1}, writes={"prog": 4.5}),
        ]
    )
    return ref, div


def test_a_read_racing_its_writer_is_the_root():
    ref, div = missing_dependency_runs()
    (root,) = find_roots(ref, div, {"a.o", "prog"})
    assert root.command == "cc -c a.c" and root.chain == ("prog", "a.o")
    assert root.outputs == ("a.o",) and root.explains == ("a.o", "prog")
    (diff,) = root.input_differences
    assert (diff.file, diff.how, diff.other) == ("gen.h", WRITER_TIMING, "python3 gen.py > gen.h")
    assert (diff.ref_time, diff.div_time) == (pytest.approx(3.2), pytest.approx(1.7))  # since the build began
    assert "still running" in diff.detail and "finished" in diff.detail


def test_a_step_failing_only_in_the_divergent_run_is_a_root():
    ref = synthetic_trace(
        [
            FakeStep("gen > gen.h", 0, 1, writes={"gen.h": 0.5}),
            FakeStep("cc -c a.c", 2, 3, reads={"gen.h": 2.1}, writes={"a.o": 2.5}),
        ]
    )
    div = synthetic_trace(
        [
            FakeStep("gen > gen.h", 0, 1, writes={"gen.h": 0.5}),
            FakeStep("cc -c a.c", 0.2, 0.3, probes={"gen.h": (0.25, False)}, exit_code=1),
        ]
    )
    (root,) = find_roots(ref, div, {"a.o"})
    assert root.failed and root.div.exit_code == 1 and root.ref.exit_code == 0
    (diff,) = root.input_differences
    assert (diff.file, diff.how, diff.other) == ("gen.h", EXISTENCE, "gen > gen.h")


def test_two_writers_of_a_differing_file_name_each_other():
    steps = [
        FakeStep("echo a >> log", 0, 1, writes={"log": 0.5}),
        FakeStep("echo b >> log", 0.2, 1, writes={"log": 0.3}),
    ]
    roots = find_roots(synthetic_trace(steps), synthetic_trace(steps), {"log"})
    assert {r.command for r in roots} == {"echo a >> log", "echo b >> log"}
    for root in roots:
        assert {d.how for d in root.input_differences} == {CO_WRITER}
        assert all(d.other != root.command for d in root.input_differences)


def archive_recipe(t0: float, ranlib_reads: bool = True, ranlib_start: float = 1.1) -> list[FakeStep]:
    """`ar rU lib.a a.o` then `ranlib lib.a`, lines of one recipe."""
    return [
        FakeStep("ar rU lib.a a.o", t0, t0 + 1, reads={"a.o": t0 + 0.1}, writes={"lib.a": t0 + 0.5}),
        FakeStep("ranlib lib.a", t0 + ranlib_start, t0 + ranlib_start + 0.5,
                 reads={"lib.a": t0 + ranlib_start + 0.1} if ranlib_reads else {},
                 writes={"lib.a": t0 + ranlib_start + 0.2}),
    ]


@FAST
@given(st.floats(0, 5), st.floats(0, 5))
def test_a_line_rewriting_the_archive_after_it_follows_its_writer(t_ref, t_div):
    """ranlib after ar in both runs: one root, the archiver, replayed with ranlib after it."""
    (root,) = find_roots(synthetic_trace(archive_recipe(t_ref)), synthetic_trace(archive_recipe(t_div)), {"lib.a"})
    assert root.command == "ar rU lib.a a.o" and root.input_differences == ()
    assert [s.command for s in root.rewriters] == ["ranlib lib.a"]


@pytest.mark.parametrize("ranlib_reads, ranlib_start", [(False, 1.1), (True, 0.5)])
def test_a_writer_that_did_not_read_first_or_overlapped_is_still_a_co_writer(ranlib_reads, ranlib_start):
    """In one of the runs the second writer did not read the file first, or ran at once."""
    steps = archive_recipe(0, ranlib_reads, ranlib_start)
    roots = find_roots(synthetic_trace(steps), synthetic_trace(archive_recipe(0)), {"lib.a"})
    assert {r.command for r in roots} == {"ar rU lib.a a.o", "ranlib lib.a"}
    assert all(r.rewriters == () and CO_WRITER in {d.how for d in r.input_differences} for r in roots)


def nested_build(cc_exit: int, wrapper_reads_at: float):
    """make → `cd lib && make` (a step) → make → `cc -c x.c` (writes lib/x.o)."""

    def proc(i, parent, argv, start, end, code=0, accesses=()):
        return Process(i, 10 + i, parent, argv, (argv,), ".", start, end, code, None, tuple(accesses))

    wrapper_read = Access("read", "lib/x.o", wrapper_reads_at, wrapper_reads_at)
    return build_trace(
        [
            proc(0, None, ("make",), 0, 10, 2 if cc_exit else 0),
            proc(1, 0, ("sh", "-c", "cd lib && make && cp lib/x.o ."), 1, 9, 2 if cc_exit else 0, [wrapper_read]),
            proc(2, 1, ("make",), 2, 8, 2 if cc_exit else 0),
            proc(3, 2, ("sh", "-c", "cc -c x.c"), 3, 4, cc_exit, [Access("write", "lib/x.o", 3.5, 3.5)]),
        ],
        "/ws",
    )


def test_a_failure_inside_a_sub_make_blames_the_inner_step_only():
    (root,) = find_roots(nested_build(0, 8.5), nested_build(1, 8.5), set())
    assert root.command == "cc -c x.c" and root.failed


def test_read_order_and_ranking():
    def run(order):
        return synthetic_trace(
            [
                FakeStep(
                    "ar rcs lib.a *.o", 0, 1, reads={f: 0.1 * i for i, f in enumerate(order, 1)}, writes={"lib.a": 0.9}
                ),
                FakeStep("date > stamp", 2, 3, writes={"stamp": 2.5}),
            ]
        )

    roots = find_roots(run(["x.o", "y.o"]), run(["y.o", "x.o"]), {"lib.a", "stamp"})
    assert [r.command for r in roots] == ["ar rcs lib.a *.o", "date > stamp"]  # same reach: earliest first
    (diff,) = roots[0].input_differences
    assert (diff.how, diff.file) == (READ_ORDER, "y.o")
    assert (diff.ref_order, diff.div_order) == (("x.o", "y.o"), ("y.o", "x.o"))  # typed, for the cause block


# --- real races -----------------------------------------------------------------------


def traced_make(workspace, makefile: str, *args: str):
    workspace.mkdir()
    (workspace / "Makefile").write_text(makefile)
    path = str(workspace / "trace.txt")
    subprocess.run(strace.wrap(["make", *args], path), cwd=workspace, capture_output=True, timeout=120, check=False)
    return load_trace(path, str(workspace))


APPEND_RACE = "all: a b\na:\n\techo a >> log.txt; sleep 0.1\nb:\n\techo b >> log.txt; sleep 0.1\n"


GOOD_DEP = "all: out.txt\ngen.h:\n\tsleep 0.1; echo '#define X 1' > gen.h\nout.txt: gen.h\n\tcat gen.h > out.txt\n"
